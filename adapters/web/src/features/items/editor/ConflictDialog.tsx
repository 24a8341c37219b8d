// The conflict dialog: someone saved the item after the editor loaded it.
// For each part that differs between the user's draft ("yours") and the
// saved item ("theirs"), the user keeps one; parts the user did not touch
// default to theirs, parts they changed to yours. Then the editor saves
// the result on top of their revision.
import { Alert, Button, Group, Modal, Paper, Radio, ScrollArea, SimpleGrid, Stack, Text } from "@mantine/core";
import { useMemo, useState } from "react";
import { changedParts, draftOf, get, partId, partLabel, put, same, type Draft, type Item, type Module, type Part } from "./model";
import { warnStyles } from "./styles";
import { TagsView, ValueView } from "./ValueView";
import { show } from "./zones";

type Pick = "mine" | "theirs";

export interface ConflictProps {
  module: Module;
  /** What the user's edit started from. */
  base: Draft;
  mine: Draft;
  theirs: Item;
  parts: Part[];
  zone: string;
  appModules: string[];
  /** "save": the user was saving; "merge": the merge only replaces the draft. */
  mode: "save" | "merge";
  onResolve: (merged: Draft) => void;
  onCancel: () => void;
}

export function ConflictDialog(p: ConflictProps) {
  const theirs = useMemo(() => draftOf(p.theirs, p.module), [p.theirs, p.module]);
  const differ = useMemo(() => changedParts(p.parts, p.mine, theirs), [p.parts, p.mine, theirs]);
  const [picks, setPicks] = useState<Record<string, Pick>>(() =>
    Object.fromEntries(differ.map((part) => [partId(part), same(get(p.mine, part), get(p.base, part)) ? "theirs" : "mine"])),
  );
  const by = p.theirs.updatedBy ?? p.theirs.createdBy;
  const at = show(p.theirs.updatedAt ?? p.theirs.createdAt, p.zone);
  const all = (k: Pick) => setPicks(Object.fromEntries(differ.map((part) => [partId(part), k])));
  const resolve = () => {
    // Start from theirs (their dates, untouched parts), then put back what the user keeps.
    let merged = theirs;
    for (const part of differ) if (picks[partId(part)] === "mine") merged = put(merged, part, get(p.mine, part));
    p.onResolve(merged);
  };

  return (
    <Modal opened onClose={p.onCancel} size="xl" title="Someone else changed this item" scrollAreaComponent={ScrollArea.Autosize}>
      <Stack gap="sm">
        <Alert color="orange" variant="light" title={`Saved by ${by} at ${at}`} styles={warnStyles}>
          {differ.length === 0
            ? "Their version holds the same content as yours: nothing to choose."
            : `Your version and theirs differ in ${differ.length} ${differ.length === 1 ? "place" : "places"}. For each, keep yours or take theirs; ${
                p.mode === "save" ? "then save." : "then go on editing."
              }`}
        </Alert>
        {differ.map((part) => {
          const id = partId(part);
          const label = partLabel(part);
          const field = part.key === "value" ? part.field : undefined;
          const view = (d: Draft) =>
            part.key === "tags" ? (
              <TagsView tags={d.tags} />
            ) : (
              <ValueView field={field} value={get(d, part)} zone={p.zone} appModules={p.appModules} />
            );
          const youChanged = !same(get(p.mine, part), get(p.base, part));
          const theyChanged = !same(get(theirs, part), get(p.base, part));
          const who = youChanged && theyChanged ? "Both of you changed it" : youChanged ? "You changed it" : theyChanged ? `${by} changed it` : "";
          return (
            <Radio.Group
              key={id}
              label={label}
              description={who}
              value={picks[id]}
              onChange={(v) => setPicks((x) => ({ ...x, [id]: v as Pick }))}
              data-conflict-field={label}
            >
              <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm" mt={4}>
                {(["mine", "theirs"] as const).map((k) => (
                  <Paper
                    key={k}
                    withBorder
                    p="sm"
                    style={{ borderColor: picks[id] === k ? "var(--mantine-color-indigo-7)" : undefined, borderWidth: picks[id] === k ? 2 : 1 }}
                  >
                    <Radio
                      value={k}
                      label={k === "mine" ? "Yours" : "Theirs"}
                      description={k === "theirs" ? `Saved by ${by} at ${at}` : youChanged ? "Your edit, not saved" : "As you opened it"}
                      aria-label={`${k === "mine" ? "Keep yours" : "Take theirs"} for ${label}`}
                      mb={6}
                    />
                    {view(k === "mine" ? p.mine : theirs)}
                  </Paper>
                ))}
              </SimpleGrid>
            </Radio.Group>
          );
        })}
        <Group justify="space-between" mt="sm">
          <Group gap="xs">
            <Button variant="default" onClick={() => all("mine")} disabled={differ.length === 0}>
              Keep all mine
            </Button>
            <Button variant="default" onClick={() => all("theirs")} disabled={differ.length === 0}>
              Take all theirs
            </Button>
          </Group>
          <Group gap="xs">
            <Button variant="default" onClick={p.onCancel}>
              Cancel
            </Button>
            <Button onClick={resolve}>{p.mode === "save" ? "Save these choices" : "Use these choices"}</Button>
          </Group>
        </Group>
        {p.mode === "save" && (
          <Text size="xs" c="dimmed">
            Saving stores your choices as a new revision after theirs; the history keeps both.
          </Text>
        )}
      </Stack>
    </Modal>
  );
}
