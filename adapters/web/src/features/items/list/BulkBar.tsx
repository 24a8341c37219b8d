// Bulk actions on the selected items: publish, unpublish, delete (after a
// confirmation). Each item succeeds or fails on its own; a partial
// failure is reported item by item, and the failed items stay selected.
import { Button, Group, Paper, Text, Tooltip } from "@mantine/core";
import { modals } from "@mantine/modals";
import { notifications } from "@mantine/notifications";
import { IconSend, IconSendOff, IconTrash } from "@tabler/icons-react";
import { useState } from "react";
import type { Schemas } from "../../../api/client";
import { whyNot } from "../../access/rights";
import { useBulk, type Outcome } from "./queries";

type Item = Schemas["Instance"];

interface Props {
  appId: string;
  moduleId: string;
  selected: Map<string, Item>;
  canUpdate: boolean;
  canDelete: boolean;
  /** Keep only these selected (the failed ones). */
  onDone: (keep: string[]) => void;
}

const plural = (n: number) => `${n} item${n === 1 ? "" : "s"}`;

function report(verb: string, out: Outcome, names: Map<string, Item>) {
  const total = out.ok.length + out.failed.length;
  if (out.failed.length === 0) {
    notifications.show({ color: "green", title: "Done", message: `${verb} ${plural(total)}.` });
    return;
  }
  const lines = out.failed.slice(0, 8).map((f) => `${names.get(f.id)?.name ?? f.id}: ${f.message}`);
  if (out.failed.length > 8) lines.push(`…and ${out.failed.length - 8} more`);
  notifications.show({
    color: "red",
    autoClose: false,
    title: `${verb} ${out.ok.length} of ${plural(total)}; ${out.failed.length} failed`,
    message: (
      <ul style={{ margin: 0, paddingLeft: "1.2em" }} aria-label="Failures">
        {lines.map((l, i) => (
          <li key={i}>{l}</li>
        ))}
      </ul>
    ),
  });
}

export function BulkBar({ appId, moduleId, selected, canUpdate, canDelete, onDone }: Props) {
  const bulk = useBulk(moduleId);
  const [busy, setBusy] = useState<string | null>(null);
  const ids = [...selected.keys()];
  const n = ids.length;

  const run = async (name: string, verb: string, f: (ids: string[]) => Promise<Outcome>) => {
    setBusy(name);
    const names = new Map(selected);
    try {
      const out = await f(ids);
      report(verb, out, names);
      onDone(out.failed.map((x) => x.id));
    } finally {
      setBusy(null);
    }
  };

  const confirmDelete = () =>
    modals.openConfirmModal({
      title: `Delete ${plural(n)}?`,
      children: (
        <Text size="sm">
          {n === 1 ? `“${selected.values().next().value?.name}”` : `The ${plural(n)} selected`} will be deleted: apps no longer get
          them. A deleted item can be restored from its editor.
        </Text>
      ),
      labels: { confirm: `Delete ${plural(n)}`, cancel: "Cancel" },
      confirmProps: { color: "red" },
      onConfirm: () => void run("delete", "Deleted", bulk.remove),
    });

  const scope = { app: appId, module: moduleId };
  const action = (name: string, label: string, icon: React.ReactNode, allowed: boolean, why: string, onClick: () => void, color?: string) => (
    <Tooltip label={why} disabled={allowed} multiline w={260}>
      <Button
        size="xs"
        variant={color ? "light" : "default"}
        color={color}
        leftSection={icon}
        disabled={!allowed || busy !== null}
        loading={busy === name}
        onClick={onClick}
        // A disabled button still shows its tooltip.
        style={!allowed ? { pointerEvents: "auto" } : undefined}
      >
        {label}
      </Button>
    </Tooltip>
  );

  return (
    <Paper withBorder px="sm" py={6} bg="var(--mantine-primary-color-light)" role="region" aria-label="Bulk actions">
      <Group justify="space-between" gap="xs">
        <Group gap="xs">
          <Text size="sm" fw={600} aria-live="polite">
            {n} selected
          </Text>
          <Text size="sm" c="dimmed" aria-hidden>
            |
          </Text>
          <Button size="compact-sm" variant="subtle" onClick={() => onDone([])}>
            Clear
          </Button>
        </Group>
        <Group gap="xs">
          {action("publish", "Publish", <IconSend size={14} aria-hidden />, canUpdate, whyNot("update", scope), () => void run("publish", "Published", bulk.publish))}
          {action("unpublish", "Unpublish", <IconSendOff size={14} aria-hidden />, canUpdate, whyNot("update", scope), () => void run("unpublish", "Unpublished", bulk.unpublish))}
          {action("delete", "Delete", <IconTrash size={14} aria-hidden />, canDelete, whyNot("delete", scope), confirmDelete, "red")}
        </Group>
      </Group>
    </Paper>
  );
}
