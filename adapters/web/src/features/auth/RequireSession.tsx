import { Center, Loader } from "@mantine/core";
import { useEffect, useState, useSyncExternalStore, type ReactNode } from "react";
import { Navigate, useLocation } from "react-router";
import * as session from "../../auth/session";

/**
 * RequireSession shows its children to a signed-in user. After a reload
 * the access token is gone from memory: the session is restored from the
 * refresh cookie once, else the user is sent to the sign-in page.
 */
export function RequireSession({ children }: { children: ReactNode }) {
  const signedIn = useSyncExternalStore(session.subscribe, session.signedIn);
  const [restoring, setRestoring] = useState(!signedIn);
  const location = useLocation();

  useEffect(() => {
    if (signedIn) return;
    let live = true;
    session.restore().finally(() => live && setRestoring(false));
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  if (signedIn) return <>{children}</>;
  if (restoring) {
    return (
      <Center h="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  const next = location.pathname + location.search;
  return <Navigate to={`/sign-in?next=${encodeURIComponent(next)}`} replace />;
}
