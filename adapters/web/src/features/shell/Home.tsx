import { Stack, Text, Title } from "@mantine/core";
import { Navigate } from "react-router";
import { useApps, useSelf } from "../access/hooks";
import { PageLoader } from "./PageLoader";
import { useCurrentApp } from "./AppSwitcher";

/** Home goes to the content of the app used last, or the first one. */
export function Home() {
  const apps = useApps();
  const self = useSelf();
  const last = useCurrentApp(undefined);
  if (apps.isLoading) return <PageLoader />;
  const list = apps.data ?? [];
  const app = list.find((a) => a.id === last) ?? list[0];
  if (app) return <Navigate to={`/apps/${app.id}/modules`} replace />;
  return (
    <Stack>
      <Title order={2}>Welcome{self.data?.name ? `, ${self.data.name}` : ""}</Title>
      <Text>You have no app to work on yet. An administrator creates apps and grants you rights on them.</Text>
    </Stack>
  );
}
