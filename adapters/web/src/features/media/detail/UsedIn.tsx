// UsedIn: the items and pushes that reference a file, items linked to
// their editor.
import { Anchor, Badge, Group, List, Text } from "@mantine/core";
import { Link } from "react-router";
import type { MediaUse } from "../api";

/** UseLink: one use, an item as a link to its editor (onTint: on a coloured alert, darker and underlined). */
export function UseLink({ app, use, onTint }: { app: string; use: MediaUse; onTint?: boolean }) {
  if (use.type === "item") {
    return (
      <Group gap={6} component="span" wrap="nowrap">
        <Anchor component={Link} to={`/apps/${app}/items/${use.id}`} size="sm" c={onTint ? "indigo.9" : undefined} underline={onTint ? "always" : undefined}>
          {use.name}
        </Anchor>
        {use.published !== undefined && (
          <Badge size="xs" variant="light" color={use.published ? "green" : "gray"}>
            {use.published ? "Published" : "Not published"}
          </Badge>
        )}
      </Group>
    );
  }
  return <Text size="sm" component="span">Push: {use.name}</Text>;
}

export function UsedIn({ app, uses }: { app: string; uses: MediaUse[] }) {
  if (uses.length === 0) {
    return (
      <Text size="sm" c="dimmed">
        No item or push uses this file.
      </Text>
    );
  }
  return (
    <List size="sm" spacing={4} aria-label="Used in">
      {uses.map((u) => (
        <List.Item key={`${u.type}-${u.id}`}>
          <UseLink app={app} use={u} />
        </List.Item>
      ))}
    </List>
  );
}
