import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "@mantine/core/styles.css";
import "@mantine/dates/styles.css";
import "@mantine/notifications/styles.css";
import { App } from "./app/App";
import * as session from "./auth/session";

// After a reload the session is restored from the cookie while React
// starts, rather than once it has rendered.
if (!location.pathname.startsWith("/cms/sign-in")) void session.restore();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
