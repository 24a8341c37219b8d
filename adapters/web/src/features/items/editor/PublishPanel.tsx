// Publishing: the item's state and dates, and the commands that change
// them (publish now or at a date, expire at a date, unpublish, archive,
// unarchive, delete, restore). Each sends the revision the editor holds.
import { Badge, Button, Card, Group, Modal, Stack, Table, Text, TextInput, Title, Tooltip, VisuallyHidden } from "@mantine/core";
import { modals } from "@mantine/modals";
import {
  IconArchive,
  IconArchiveOff,
  IconCalendarTime,
  IconClockOff,
  IconEyeOff,
  IconRestore,
  IconSend,
  IconTrash,
} from "@tabler/icons-react";
import { useState, type ReactNode } from "react";
import { whyNot } from "../../access/rights";
import { describe } from "../../../lib/errors";
import { conflictOf, deleteItem, setExpiry, transition, type Transition } from "./api";
import { notifications } from "@mantine/notifications";
import { stateColor, stateLabel, stateOf, type Item } from "./model";
import { fromLocal, show, toLocal } from "./zones";
import { FormFooter } from "../../shell/FormFooter";

export function StateBadge({ item }: { item: Item }) {
  const s = stateOf(item);
  return (
    <Badge color={stateColor[s]} variant="filled" size="lg" data-state={s}>
      <VisuallyHidden>State: </VisuallyHidden>
      {stateLabel[s]}
    </Badge>
  );
}

interface Props {
  item: Item;
  zone: string;
  appId: string;
  mayUpdate: boolean;
  mayDelete: boolean;
  /** The item after a command. */
  onChanged: (item: Item, what: string) => void;
  /** A command refused for a stale revision, with the current item. */
  onConflict: (theirs: Item) => void;
  /** A command is under way (the editor then ignores news of the item, its own change among them). */
  onBusy: (busy: boolean) => void;
}

type Ask = { what: "publish" | "expire"; title: string; label: string };

export function PublishPanel(p: Props) {
  const { item, zone } = p;
  const [busy, setBusy] = useState<string>();
  const [ask, setAsk] = useState<Ask>();
  const state = stateOf(item);
  const scope = { app: p.appId, module: item.module, item: item.id };

  const run = async (key: string, done: string, f: () => Promise<Item>) => {
    setBusy(key);
    p.onBusy(true);
    try {
      p.onChanged(await f(), done);
      notifications.show({ color: "green", message: done });
    } catch (err) {
      const theirs = conflictOf(err);
      if (theirs) p.onConflict(theirs);
      else notifications.show({ color: "red", title: "Not done", message: describe(err) });
    } finally {
      setBusy(undefined);
      p.onBusy(false);
    }
  };
  const command = (what: Transition, done: string, at?: number) => run(what, done, () => transition(item, what, at));

  const guard = (may: boolean, perm: "update" | "delete", button: ReactNode) =>
    may ? button : <Tooltip label={whyNot(perm, scope)} multiline w={260}>{<span>{button}</span>}</Tooltip>;
  const action = (key: string, label: string, icon: ReactNode, onClick: () => void, opts: { color?: string; perm?: "update" | "delete" } = {}) => {
    const perm = opts.perm ?? "update";
    const may = perm === "update" ? p.mayUpdate : p.mayDelete;
    return guard(
      may,
      perm,
      <Button
        key={key}
        variant="light"
        color={opts.color}
        leftSection={icon}
        loading={busy === key}
        disabled={!may || (busy !== undefined && busy !== key)}
        onClick={onClick}
        fullWidth
        justify="flex-start"
      >
        {label}
      </Button>,
    );
  };

  const confirmDelete = () =>
    modals.openConfirmModal({
      title: "Delete this item?",
      children: <Text size="sm">“{item.name}” disappears from apps and lists. You can restore it later from this page.</Text>,
      labels: { confirm: "Delete", cancel: "Cancel" },
      confirmProps: { color: "red" },
      onConfirm: () => run("delete", "Item deleted", () => deleteItem(item)),
    });

  const rows: [string, ReactNode][] = [
    ["Created", `${show(item.createdAt, zone)} by ${item.createdBy}`],
    ["Changed", item.updatedAt ? `${show(item.updatedAt, zone)} by ${item.updatedBy ?? "?"}` : "—"],
    [state === "scheduled" ? "Publishes" : "Published", show(item.publishedAt, zone)],
    ["Expires", show(item.removedAt, zone)],
    ["Archived", show(item.archivedAt, zone)],
  ];
  if (item.deletedAt) rows.push(["Deleted", `${show(item.deletedAt, zone)} by ${item.deletedBy ?? "?"}`]);
  rows.push(["Revision", String(item.revision)]);

  return (
    <Card withBorder padding="md" component="section" aria-labelledby="publishing-title">
      <Group justify="space-between" mb="xs">
        <Title order={2} size="h4" id="publishing-title">
          Publishing
        </Title>
        <StateBadge item={item} />
      </Group>
      <Table fz="sm" verticalSpacing={4} mb="sm">
        <Table.Tbody>
          {rows.map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Th w={96} fw={500}>
                {k}
              </Table.Th>
              <Table.Td>{v}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Text size="xs" c="dimmed" mb="sm">
        Times in {zone}.
      </Text>
      <Stack gap={6}>
        {state === "deleted" ? (
          action("restore", "Restore", <IconRestore size={16} />, () => command("restore", "Item restored"))
        ) : (
          <>
            {state !== "published" && action("publish", "Publish now", <IconSend size={16} />, () => command("publish", "Item published"))}
            {action("schedule", "Schedule publication…", <IconCalendarTime size={16} />, () =>
              setAsk({ what: "publish", title: "Schedule publication", label: "Publish at" }),
            )}
            {action("expire", item.removedAt ? "Change expiry…" : "Schedule expiry…", <IconClockOff size={16} />, () =>
              setAsk({ what: "expire", title: "Schedule expiry", label: "Expire at" }),
            )}
            {item.removedAt !== null &&
              action("noexpiry", "Remove expiry", <IconClockOff size={16} />, () =>
                run("noexpiry", "Expiry removed", () => setExpiry(item, null)),
              )}
            {item.publishedAt !== null &&
              action("unpublish", "Unpublish", <IconEyeOff size={16} />, () => command("unpublish", "Item unpublished (now a concept)"))}
            {item.archivedAt !== null
              ? action("unarchive", "Unarchive", <IconArchiveOff size={16} />, () => command("unarchive", "Item unarchived"))
              : action("archive", "Archive", <IconArchive size={16} />, () => command("archive", "Item archived"))}
            {action("delete", "Delete…", <IconTrash size={16} />, confirmDelete, { color: "red", perm: "delete" })}
          </>
        )}
      </Stack>
      {ask && (
        <DateDialog
          ask={ask}
          zone={zone}
          initial={ask.what === "publish" ? item.publishedAt : item.removedAt}
          min={ask.what === "expire" ? item.publishedAt : null}
          onClose={() => setAsk(undefined)}
          onPick={(at) => {
            setAsk(undefined);
            if (ask.what === "publish") void command("publish", `Publication scheduled for ${show(at, zone)}`, at);
            else void run("expire", `Expiry set to ${show(at, zone)}`, () => setExpiry(item, at));
          }}
        />
      )}
    </Card>
  );
}

function DateDialog(p: { ask: Ask; zone: string; initial: number | null; min: number | null; onClose: () => void; onPick: (at: number) => void }) {
  const start = p.initial && p.initial > Date.now() ? p.initial : Date.now() + 24 * 3600_000;
  const [text, setText] = useState(toLocal(start, p.zone));
  const at = fromLocal(text, p.zone);
  const error =
    at === null
      ? "Choose a date and time"
      : at <= Date.now()
        ? "Must be in the future"
        : p.min !== null && at <= p.min
          ? `Must be after the publication (${show(p.min, p.zone)})`
          : undefined;
  return (
    <Modal opened onClose={p.onClose} title={p.ask.title}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!error && at !== null) p.onPick(at);
        }}
      >
        <Stack>
          <TextInput
            type="datetime-local"
            label={p.ask.label}
            description={`Time zone: ${p.zone}`}
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            error={text ? error : undefined}
            data-autofocus
          />
          <FormFooter onCancel={p.onClose} submit={p.ask.what === "publish" ? "Schedule" : "Set expiry"} disabled={!!error} />
        </Stack>
      </form>
    </Modal>
  );
}
