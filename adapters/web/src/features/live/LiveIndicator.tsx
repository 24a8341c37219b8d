import { Anchor, Box, Popover, Stack, Text, Title, UnstyledButton } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { Link } from "react-router";
import { useLiveStatus, useRecentChanges, type ContentChange, type LiveStatus } from "./hooks";

const words: Record<LiveStatus, { label: string; says: string; color: string }> = {
  connected: { label: "connected", says: "Lists and open items update as others change them.", color: "var(--mantine-color-teal-7)" },
  connecting: { label: "connecting", says: "Connecting to the server's live changes…", color: "var(--mantine-color-yellow-8)" },
  reconnecting: {
    label: "reconnecting",
    says: "The connection was lost; reconnecting. What you see may be out of date until then.",
    color: "var(--mantine-color-orange-8)",
  },
  refused: { label: "not available", says: "Live updates are not available for this app.", color: "var(--mantine-color-gray-6)" },
  off: { label: "off", says: "Choose an app to follow its changes live.", color: "var(--mantine-color-gray-6)" },
};

const verbs: Record<string, string> = {
  "content.item_created": "created",
  "content.item_edited": "edited",
  "content.item_published": "published",
  "content.item_unpublished": "unpublished",
  "content.item_expiry_set": "expiry set",
  "content.item_archived": "archived",
  "content.item_unarchived": "unarchived",
  "content.item_deleted": "deleted",
  "content.item_restored": "restored",
  "content.item_reverted": "restored to an earlier revision",
  "content.module_created": "created",
  "content.module_renamed": "renamed",
  "content.module_configured": "reconfigured",
  "content.module_fields_changed": "fields changed",
  "content.module_deleted": "deleted",
};

/** describeChange says a change in words: "Item edited by Ann". */
export function describeChange(c: ContentChange): string {
  const what = c.kind === "module" ? "Content structure" : "Item";
  return `${what} ${verbs[c.type] ?? c.type.replace(/^content\./, "").replace(/_/g, " ")} by ${c.by}`;
}

function linkOf(c: ContentChange): string {
  return c.kind === "module" || !c.item ? `/apps/${c.app}/modules/${c.module}/items` : `/apps/${c.app}/items/${c.item}`;
}

/**
 * LiveIndicator is the shell's dot that says whether lists are live, and
 * opens the last changes received.
 */
export function LiveIndicator() {
  const status = useLiveStatus();
  const changes = useRecentChanges();
  const [opened, { toggle, close }] = useDisclosure(false);
  const w = words[status];
  const label = `Live updates: ${w.label}`;
  return (
    <Popover opened={opened} onChange={(o) => !o && close()} position="bottom-end" width={320} withArrow shadow="md">
      <Popover.Target>
        <UnstyledButton aria-label={label} title={label} aria-expanded={opened} onClick={toggle} p={8} style={{ lineHeight: 0 }}>
          <Box
            component="span"
            aria-hidden
            data-status={status}
            style={{ display: "inline-block", width: 12, height: 12, borderRadius: "50%", background: w.color }}
          />
        </UnstyledButton>
      </Popover.Target>
      <Popover.Dropdown aria-label="Live updates">
        <Stack gap="xs">
          <Title order={2} size="h6">
            {label}
          </Title>
          <Text size="sm">{w.says}</Text>
          <Title order={3} size="h6">
            Recent changes
          </Title>
          {changes.length === 0 ? (
            <Text size="sm">No change since you opened this app.</Text>
          ) : (
            <Stack component="ul" gap={6} m={0} p={0} style={{ listStyle: "none" }} aria-label="Recent changes">
              {changes.map((c) => (
                <li key={`${c.type}-${c.item ?? c.module}-${c.revision}-${c.at}`}>
                  <Anchor component={Link} to={linkOf(c)} size="sm" onClick={close}>
                    {describeChange(c)}
                  </Anchor>
                  <Text size="xs" c="dark.6">
                    {new Date(c.at).toLocaleTimeString()} · revision {c.revision}
                  </Text>
                </li>
              ))}
            </Stack>
          )}
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}
