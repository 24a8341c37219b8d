import { Avatar, Menu, UnstyledButton, Group, Text } from "@mantine/core";
import { notifications } from "@mantine/notifications";
import { useNavigate } from "react-router";
import * as session from "../../auth/session";
import { queryClient } from "../../app/queryClient";
import { describe } from "../../lib/errors";
import { useSelf } from "../access/hooks";

export function UserMenu() {
  const self = useSelf();
  const navigate = useNavigate();
  const name = self.data?.name || self.data?.username || "";

  async function signOut() {
    try {
      await session.signOut();
    } catch (err) {
      notifications.show({ color: "red", title: "Sign-out failed on the server", message: describe(err) });
    }
    queryClient.clear();
    navigate("/sign-in", { replace: true });
  }

  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <UnstyledButton aria-label={`Account: ${name}`}>
          <Group gap="xs" wrap="nowrap">
            <Avatar size="sm" color="indigo" name={name} />
            <Text size="sm" visibleFrom="sm">
              {name}
              {self.data?.admin ? " (admin)" : ""}
            </Text>
          </Group>
        </UnstyledButton>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{self.data?.username}</Menu.Label>
        <Menu.Item onClick={signOut}>Sign out</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
