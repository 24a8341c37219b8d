// The API's 409 on a structure change that existing items do not satisfy
// (a new required field, a narrower rule, a removed field they hold, the
// single flag, allowed tags): which items, why, and links to them.
import { Alert, Anchor, List, Text } from "@mantine/core";
import { Link } from "react-router";
import type { ApiError } from "../../../lib/errors";

interface Affected {
  id: string;
  field?: string;
  rule?: string;
  error?: string;
  tags?: { name?: string; value?: string }[];
}

const ruleWords: Record<string, string> = {
  required: "has no value for it",
  maxLength: "is longer than the new maximum length",
  minLength: "is shorter than the new minimum length",
  pattern: "does not match the new pattern",
  min: "is below the new minimum",
  max: "is above the new maximum",
  values: "is not one of the allowed values",
  unknown: "holds a value for it (removed or renamed)",
  mediaTypes: "is not one of the allowed file types",
};

function why(a: Affected): string {
  if (a.tags?.length) return `carries ${a.tags.map((t) => (t.value ? `${t.name} = ${t.value}` : t.name)).join(", ")}`;
  if (!a.field) return "is one of several live items";
  const rule = a.rule ?? (a.error === "validator.unknown" ? "unknown" : "");
  return `field “${a.field}”: ${ruleWords[rule] ?? `breaks ${rule || a.error || "its rules"}`}`;
}

export function affectedOf(err: ApiError): { items: Affected[]; count: number } | undefined {
  const items = err.extra.affectedItems;
  if (err.status !== 409 || !Array.isArray(items)) return undefined;
  const count = typeof err.extra.affectedCount === "number" ? err.extra.affectedCount : items.length;
  return { items: items as Affected[], count };
}

export function ConflictAlert({ app, err, onClose }: { app: string; err: ApiError; onClose: () => void }) {
  const a = affectedOf(err);
  if (!a) return null;
  const field = err.field;
  const advice =
    field === "isSingle"
      ? "A single-item module holds one live item: delete all but one of these first, or keep the module multi-item."
      : field === "tags"
        ? "Remove those tags from these items (or delete them) first, or allow the tags here."
        : "Change or delete these items first, or make the change looser (an optional field, a wider rule).";
  return (
    <Alert color="red" title="Nothing was saved: existing items do not fit the change" withCloseButton closeButtonLabel="Dismiss" onClose={onClose} role="alert">
      <Text size="sm">{err.message}</Text>
      <Text size="sm" mt={4}>
        {advice}
      </Text>
      <List size="sm" mt="xs" spacing={2}>
        {a.items.map((it, i) => (
          <List.Item key={`${it.id}-${i}`}>
            <Anchor c="indigo.8" component={Link} to={`/apps/${app}/items/${it.id}`}>
              Item {it.id}
            </Anchor>{" "}
            {why(it)}
          </List.Item>
        ))}
      </List>
      {a.count > a.items.length && (
        <Text size="sm" mt={4}>
          …and {a.count - a.items.length} more ({a.count} in all).
        </Text>
      )}
    </Alert>
  );
}
