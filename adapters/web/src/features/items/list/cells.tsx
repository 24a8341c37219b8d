// How a value shows in a list cell: short, one line, its type recognisable.
import { Badge, ColorSwatch, Group, Text, Tooltip } from "@mantine/core";
import dayjs from "dayjs";
import type { Prop } from "./props";

export const formatDate = (ms: number) => dayjs(ms).format("D MMM YYYY, HH:mm");

function short(s: string, n = 60): string {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

function text(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return v.map(text).join(", ");
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (typeof o.name === "string") return o.name; // an included item
    return JSON.stringify(v);
  }
  return String(v);
}

const none = (
  <Text span c="dimmed" size="sm" aria-label="empty">
    –
  </Text>
);

export function Cell({ prop, value }: { prop: Prop; value: unknown }) {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return none;
  const kind = prop.field ? prop.field.type : "";
  if (prop.kind === "date" && typeof value === "number") {
    return (
      <Text span size="sm" style={{ whiteSpace: "nowrap" }}>
        {prop.field?.type === "000000000000000000000007" ? dayjs(value).format("HH:mm") : formatDate(value)}
      </Text>
    );
  }
  if (prop.kind === "boolean") return <Text span size="sm">{value === true ? "Yes" : value === false ? "No" : text(value)}</Text>;
  if (prop.kind === "number") return <Text span size="sm" ff="monospace">{text(value)}</Text>;
  if (kind === "000000000000000000000009" && typeof value === "string") {
    return (
      <Group gap={6} wrap="nowrap">
        <ColorSwatch color={value} size={14} aria-hidden />
        <Text span size="sm" ff="monospace">{value}</Text>
      </Group>
    );
  }
  if (prop.kind === "choice" && Array.isArray(value)) {
    return (
      <Group gap={4} wrap="nowrap">
        {value.slice(0, 3).map((v) => (
          <Badge key={String(v)} variant="light" color="gray.8" size="sm" tt="none">
            {text(v)}
          </Badge>
        ))}
        {value.length > 3 && <Text span size="xs">+{value.length - 3}</Text>}
      </Group>
    );
  }
  let s: string;
  if (prop.field?.localized || (typeof value === "object" && !Array.isArray(value) && prop.kind === "text")) {
    // Localized text: the first locale's text, with its locale.
    const entries = Object.entries(value as Record<string, unknown>).filter(([, t]) => t);
    s = entries.length ? `${text(entries[0][1])}${entries.length > 1 ? ` (+${entries.length - 1})` : ""}` : "";
  } else s = text(value);
  const cut = short(s);
  return cut === s ? (
    <Text span size="sm">{s}</Text>
  ) : (
    <Tooltip label={short(s, 400)} multiline w={320} openDelay={400}>
      <Text span size="sm">{cut}</Text>
    </Tooltip>
  );
}
