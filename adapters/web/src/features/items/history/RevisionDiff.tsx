// Two revisions side by side, field by field: the name, every value, the
// tags and the dates. Long texts show a word diff.
import { Badge, Group, Switch, Table, Text } from "@mantine/core";
import { lazy, Suspense, useState, type ReactNode } from "react";
import { kindOf } from "../../../lib/fieldTypes";
import type { Schemas } from "../../../api/client";
import { same, type Item, type Module } from "../editor/model";
import { TagsView, ValueView } from "../editor/ValueView";
import { show } from "../editor/zones";

const TextDiff = lazy(() => import("./TextDiff"));

/** A revision as read (the item after it). */
export type Revision = Omit<Schemas["Revision"], "instance"> & { instance: Item };

interface Row {
  label: string;
  a: unknown;
  b: unknown;
  view: (v: unknown, side: "old" | "new") => ReactNode;
}

export function RevisionDiff({ module, a, b, zone, appModules }: { module: Module; a: Revision; b: Revision; zone: string; appModules: string[] }) {
  const [all, setAll] = useState(false);
  const x = a.instance;
  const y = b.instance;
  const date = (v: unknown) => <Text size="sm">{show(v as number | null, zone)}</Text>;
  const rows: Row[] = [
    { label: "Name", a: x.name, b: y.name, view: (v, side) => text(v, side === "old" ? y.name : x.name, side) },
    ...(module.fields ?? []).map<Row>((f) => ({
      label: f.name,
      a: x.values[f.name],
      b: y.values[f.name],
      view: (v, side) => {
        const other = side === "old" ? y.values[f.name] : x.values[f.name];
        if (kindOf(f) === "text" && typeof v === "string" && typeof other === "string" && v.length + other.length > 80) return text(v, other, side);
        return <ValueView field={f} value={v} zone={zone} appModules={appModules} />;
      },
    })),
    { label: "Tags", a: x.tags, b: y.tags, view: (v) => <TagsView tags={(v as Item["tags"]) ?? []} /> },
    { label: "Published", a: x.publishedAt, b: y.publishedAt, view: date },
    { label: "Expires", a: x.removedAt, b: y.removedAt, view: date },
    { label: "Archived", a: x.archivedAt, b: y.archivedAt, view: date },
    { label: "Deleted", a: x.deletedAt, b: y.deletedAt, view: date },
  ];
  const shown = rows.filter((r) => all || !same(r.a, r.b));
  const changed = rows.filter((r) => !same(r.a, r.b)).length;

  return (
    <>
      <Group justify="space-between" mb="xs">
        <Text size="sm">
          {changed === 0 ? "The two revisions hold the same content." : `${changed} ${changed === 1 ? "difference" : "differences"}.`}
        </Text>
        <Switch label="Show unchanged fields too" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />
      </Group>
      <Table.ScrollContainer minWidth={560}>
        <Table withTableBorder withColumnBorders verticalSpacing="xs" aria-label="Differences between the two revisions" layout="fixed">
          <Table.Thead>
            <Table.Tr>
              <Table.Th w={150}>Field</Table.Th>
              <Table.Th>Revision {a.revision}</Table.Th>
              <Table.Th>Revision {b.revision}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.map((r) => {
              const differs = !same(r.a, r.b);
              return (
                <Table.Tr key={r.label} data-field={r.label}>
                  <Table.Th scope="row" fw={500}>
                    <Group gap={4}>
                      {r.label}
                      {differs && (
                        <Badge size="xs" color="red.9" variant="outline">
                          changed
                        </Badge>
                      )}
                    </Group>
                  </Table.Th>
                  <Table.Td>{r.view(r.a, "old")}</Table.Td>
                  <Table.Td>{r.view(r.b, "new")}</Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </>
  );
}

function text(v: unknown, other: unknown, side: "old" | "new") {
  if (typeof v !== "string" || typeof other !== "string" || v === other) return <ValueView value={v} zone="UTC" />;
  const [a, b] = side === "old" ? [v, other] : [other, v];
  return (
    <Suspense fallback={<ValueView value={v} zone="UTC" />}>
      <TextDiff a={a} b={b} side={side} />
    </Suspense>
  );
}
