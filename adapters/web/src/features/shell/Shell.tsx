import { AppShell, Burger, Group, NavLink, Text, Title } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { Suspense } from "react";
import { NavLink as RouterLink, Outlet, useParams } from "react-router";
import { useSelf } from "../access/hooks";
import { useLiveContent } from "../live/hooks";
import { LiveIndicator } from "../live/LiveIndicator";
import { AppSwitcher, useCurrentApp } from "./AppSwitcher";
import { PageLoader } from "./PageLoader";
import { sections } from "./sections";
import { UserMenu } from "./UserMenu";

/** Shell is the frame of every screen: top bar, navigation, the screen. */
export function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const { appId } = useParams();
  const app = useCurrentApp(appId);
  const self = useSelf();
  useLiveContent(app); // lists and open items of the app stay current

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: "sm", collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={1} size="h4">
              HALO CMS
            </Title>
            <AppSwitcher current={app} />
          </Group>
          <Group gap="xs" wrap="nowrap">
            <LiveIndicator />
            <UserMenu />
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Sections">
        {sections
          .filter((s) => (!s.adminOnly || self.data?.admin) && (!s.perApp || app))
          .map((s) => (
            <NavLink
              key={s.label}
              label={s.label}
              leftSection={<s.icon size={18} stroke={1.6} aria-hidden />}
              component={RouterLink}
              to={s.perApp ? `/apps/${app}/${s.to}` : s.to}
              onClick={close}
            />
          ))}
        {!app && (
          <Text size="xs" c="dimmed" p="xs">
            Choose an app to see its content.
          </Text>
        )}
      </AppShell.Navbar>
      <AppShell.Main>
        <Suspense fallback={<PageLoader />}>
          <Outlet />
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
