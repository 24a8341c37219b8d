import { MantineProvider, Modal, Notification, createTheme, type CSSVariablesResolver } from "@mantine/core";
import { ModalsProvider } from "@mantine/modals";
import { Notifications } from "@mantine/notifications";
import { QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "react-router";
import { queryClient } from "./queryClient";
import { router } from "./router";

// Colours are chosen for contrast (WCAG AA, checked by axe in the browser
// tests): indigo 7 on white is 5:1; the "dimmed" grey is darkened to 6:1.
const theme = createTheme({
  primaryColor: "indigo",
  primaryShade: { light: 7, dark: 4 },
  defaultRadius: "sm",
  fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
  // Close buttons are icons: they need a name for screen readers.
  components: {
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { "aria-label": "Close" } } }),
    // A toast's message under a title is grey 6 by default (3.3:1): dark 6 keeps it readable.
    Notification: Notification.extend({
      defaultProps: { closeButtonProps: { "aria-label": "Close the message" } },
      styles: { description: { color: "var(--mantine-color-dark-6)" } },
    }),
  },
});

const contrast: CSSVariablesResolver = () => ({
  variables: {},
  // Errors at a field in red 9 (6:1), not the default red 6 (3.6:1).
  light: { "--mantine-color-dimmed": "#545b62", "--mantine-color-placeholder": "#6b7178", "--mantine-color-error": "#c92a2a" },
  dark: {},
});

export function App() {
  return (
    <MantineProvider theme={theme} defaultColorScheme="light" cssVariablesResolver={contrast}>
      <QueryClientProvider client={queryClient}>
        <ModalsProvider>
          <Notifications position="bottom-right" />
          <RouterProvider router={router} />
        </ModalsProvider>
      </QueryClientProvider>
    </MantineProvider>
  );
}
