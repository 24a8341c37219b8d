// ValueView shows a field's value for reading (the conflict dialog, the
// history's diff): texts as text, dates in the editor's zone, relations by
// their items' names.
import { Badge, Code, Group, Text } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { kindOf } from "../../../lib/fieldTypes";
import { searchItems } from "./api";
import type { Field, Tag } from "./model";
import { widgetOf } from "./FieldInput";
import { show, toLocal } from "./zones";

function Empty() {
  return (
    <Text size="sm" c="dimmed" fs="italic">
      (empty)
    </Text>
  );
}

export function RelationNames({ ids, modules }: { ids: string[]; modules: string[] }) {
  const names = useQuery({
    queryKey: ["items", modules[0] ?? "", "names", modules, ids],
    queryFn: () => searchItems({ modules, ids, limit: Math.max(ids.length, 1) }),
    enabled: ids.length > 0 && modules.length > 0,
  });
  const byId = new Map((names.data ?? []).map((f) => [f.id, f.name]));
  return (
    <Group gap={4}>
      {ids.map((id) => (
        <Badge key={id} variant="outline" color="indigo.8" tt="none">
          {byId.get(id) ?? id}
        </Badge>
      ))}
    </Group>
  );
}

export function ValueView({ field, value, zone, appModules = [] }: { field?: Field; value: unknown; zone: string; appModules?: string[] }) {
  if (value === null || value === undefined || value === "") return <Empty />;
  const kind = field ? kindOf(field) : undefined;
  const modules = field?.rules.module ? [field.rules.module] : appModules;
  if (kind === "timestamp" && typeof value === "number") {
    const w = field ? widgetOf(field) : undefined;
    const text = w === "time" ? toLocal(value, zone, "HH:mm") : w === "date" ? toLocal(value, zone, "D MMM YYYY") : show(value, zone);
    return <Text size="sm">{text}</Text>;
  }
  if (kind === "relation" && typeof value === "string") return <RelationNames ids={[value]} modules={modules} />;
  if (kind === "relations" && Array.isArray(value)) return <RelationNames ids={value as string[]} modules={modules} />;
  if (kind === "boolean") return <Text size="sm">{value ? "Yes" : "No"}</Text>;
  if (kind === "color" && typeof value === "string")
    return (
      <Group gap={6}>
        <span aria-hidden style={{ width: 14, height: 14, borderRadius: 3, background: value, border: "1px solid #888" }} />
        <Text size="sm">{value}</Text>
      </Group>
    );
  if (typeof value === "string")
    return (
      <Text size="sm" style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
        {value}
      </Text>
    );
  if (typeof value === "number") return <Text size="sm">{value}</Text>;
  if (Array.isArray(value) && value.every((x) => typeof x === "string"))
    return value.length === 0 ? (
      <Empty />
    ) : (
      <Group gap={4}>
        {(value as string[]).map((s, i) => (
          <Badge key={i} variant="outline" color="gray.8" tt="none">
            {s}
          </Badge>
        ))}
      </Group>
    );
  return (
    <Code block style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
      {JSON.stringify(value, null, 2)}
    </Code>
  );
}

export function TagsView({ tags }: { tags: Tag[] }) {
  if (!tags.length) return <Empty />;
  return (
    <Group gap={4}>
      {tags.map((t, i) => (
        <Badge key={i} variant="outline" color="gray.8" tt="none">
          {t.name}={t.value}
        </Badge>
      ))}
    </Group>
  );
}
