// The filter builder: conditions (a field or attribute × an operator × a
// value typed as the field is) matched "all of" or "any of", with groups
// one level deep. It edits a draft; "Apply" puts it in the URL.
import { ActionIcon, Alert, Button, Group, MultiSelect, NumberInput, Paper, SegmentedControl, Select, Stack, TagsInput, Text, TextInput, Tooltip } from "@mantine/core";
import { DateTimePicker } from "@mantine/dates";
import { IconFilterOff, IconPlus, IconTrash } from "@tabler/icons-react";
import dayjs from "dayjs";
import { useMemo, useState } from "react";
import { compile, FilterError, isList, needsValue, opLabel, opsByKind, problem, type Condition, type Group as FilterGroup, type Op, type Value } from "./filter";
import type { Prop } from "./props";

interface Props {
  props: Prop[];
  value: FilterGroup;
  onApply: (g: FilterGroup) => void;
  onClose: () => void;
}

const newCondition = (): Condition => ({ type: "cond", prop: "", op: "=", value: null });

export function FilterBuilder({ props, value, onApply, onClose }: Props) {
  const [draft, setDraft] = useState<FilterGroup>(value);
  const byKey = useMemo(() => new Map(props.map((p) => [p.key, p])), [props]);
  let error: string | undefined;
  try {
    compile(draft, byKey);
  } catch (e) {
    if (e instanceof FilterError) error = e.message;
  }

  return (
    <Paper withBorder p="sm" component="section" aria-label="Filter builder">
      <Stack gap="sm">
        <GroupEditor group={draft} onChange={setDraft} props={props} byKey={byKey} path="" />
        {error && (
          <Alert color="red" variant="light" title="This filter cannot be searched">
            {error}
          </Alert>
        )}
        <Group justify="space-between">
          <Button variant="subtle" leftSection={<IconFilterOff size={16} aria-hidden />} onClick={() => setDraft({ ...draft, items: [] })}>
            Remove all conditions
          </Button>
          <Group gap="xs">
            <Button variant="default" onClick={onClose}>
              Close
            </Button>
            <Button disabled={!!error} onClick={() => onApply(draft)}>
              Apply filter
            </Button>
          </Group>
        </Group>
      </Stack>
    </Paper>
  );
}

interface GroupProps {
  group: FilterGroup;
  onChange: (g: FilterGroup) => void;
  props: Prop[];
  byKey: Map<string, Prop>;
  /** "" for the top group, "group N " for a nested one (labels). */
  path: string;
  onRemove?: () => void;
}

function GroupEditor({ group, onChange, props, byKey, path, onRemove }: GroupProps) {
  const set = (i: number, n: Condition | FilterGroup | null) =>
    onChange({ ...group, items: n === null ? group.items.filter((_, j) => j !== i) : group.items.map((x, j) => (j === i ? n : x)) });
  const nested = path !== "";
  let conditionNo = 0;
  let groupNo = 0;
  return (
    <Stack gap="xs">
      <Group gap="xs">
        <Text size="sm">{nested ? "Group: items matching" : "Show items matching"}</Text>
        <SegmentedControl
          size="xs"
          aria-label={`${nested ? path : ""}match`.trim()}
          value={group.match}
          onChange={(m) => onChange({ ...group, match: m as "all" | "any" })}
          data={[
            { value: "all", label: "all of" },
            { value: "any", label: "any of" },
          ]}
        />
        <Text size="sm">these conditions</Text>
        {onRemove && (
          <Button size="compact-xs" variant="subtle" color="red.8" onClick={onRemove} ml="auto">
            Remove {path.trim()}
          </Button>
        )}
      </Group>
      {group.items.length === 0 && (
        <Text size="sm" c="dimmed">
          No conditions yet.
        </Text>
      )}
      {group.items.map((item, i) => {
        if (item.type === "group") {
          const name = `group ${++groupNo} `;
          return (
            <Paper key={i} withBorder p="xs" bg="gray.0">
              <GroupEditor group={item} onChange={(g) => set(i, g)} props={props} byKey={byKey} path={name} onRemove={() => set(i, null)} />
            </Paper>
          );
        }
        const name = `${path}condition ${++conditionNo}`;
        return <ConditionRow key={i} name={name} cond={item} props={props} prop={byKey.get(item.prop)} onChange={(c) => set(i, c)} onRemove={() => set(i, null)} />;
      })}
      <Group gap="xs">
        <Button size="xs" variant="light" leftSection={<IconPlus size={14} aria-hidden />} onClick={() => onChange({ ...group, items: [...group.items, newCondition()] })}>
          Add condition{nested ? " to " + path.trim() : ""}
        </Button>
        {!nested && (
          <Button
            size="xs"
            variant="subtle"
            leftSection={<IconPlus size={14} aria-hidden />}
            onClick={() => onChange({ ...group, items: [...group.items, { type: "group", match: group.match === "all" ? "any" : "all", items: [newCondition()] }] })}
          >
            Add group
          </Button>
        )}
      </Group>
    </Stack>
  );
}

interface RowProps {
  name: string;
  cond: Condition;
  prop: Prop | undefined;
  props: Prop[];
  onChange: (c: Condition) => void;
  onRemove: () => void;
}

function ConditionRow({ name, cond, prop, props, onChange, onRemove }: RowProps) {
  const choices = useMemo(
    () => [
      { group: "Attributes", items: props.filter((p) => p.meta).map((p) => ({ value: p.key, label: p.label })) },
      { group: "Fields", items: props.filter((p) => !p.meta).map((p) => ({ value: p.key, label: p.label })) },
    ],
    [props],
  );
  const ops = prop ? opsByKind[prop.kind] : [];
  const why = problem(cond, prop);
  return (
    <Group gap="xs" align="flex-start" wrap="wrap">
      <Select
        aria-label={`Field of ${name}`}
        placeholder="Field or attribute"
        searchable
        data={choices}
        value={cond.prop || null}
        onChange={(key) => {
          const p = props.find((x) => x.key === key);
          if (!p) return;
          const op = opsByKind[p.kind].includes(cond.op) ? cond.op : opsByKind[p.kind][0];
          onChange({ ...cond, prop: p.key, op, value: null });
        }}
        w={200}
        allowDeselect={false}
      />
      <Select
        aria-label={`Operator of ${name}`}
        placeholder="Operator"
        data={ops.map((o) => ({ value: o, label: opLabel(o, prop?.kind ?? "text") }))}
        value={prop ? cond.op : null}
        disabled={!prop}
        onChange={(o) => o && onChange({ ...cond, op: o as Op, value: isList(o as Op) === isList(cond.op) ? cond.value : null })}
        w={170}
        allowDeselect={false}
      />
      {prop && needsValue(cond.op) && (
        <ValueInput label={`Value of ${name}`} prop={prop} op={cond.op} value={cond.value} onChange={(value) => onChange({ ...cond, value })} error={cond.value !== null && why ? why : undefined} />
      )}
      <Tooltip label={`Remove ${name}`}>
        <ActionIcon variant="subtle" color="gray.8" size="lg" aria-label={`Remove ${name}`} onClick={onRemove} mt={2}>
          <IconTrash size={16} aria-hidden />
        </ActionIcon>
      </Tooltip>
    </Group>
  );
}

interface ValueProps {
  label: string;
  prop: Prop;
  op: Op;
  value: Value;
  error?: string;
  onChange: (v: Value) => void;
}

const toPicker = (ms: unknown) => (typeof ms === "number" ? dayjs(ms).format("YYYY-MM-DD HH:mm:ss") : null);

function ValueInput({ label, prop, op, value, error, onChange }: ValueProps) {
  const common = { "aria-label": label, error, w: 220 };
  const list = isList(op);
  switch (prop.kind) {
    case "number":
      return list ? (
        <TagsInput
          {...common}
          placeholder="Numbers, Enter after each"
          value={(Array.isArray(value) ? value : []).map(String)}
          onChange={(v) => onChange(v.map(Number).filter((n) => Number.isFinite(n)))}
        />
      ) : (
        <NumberInput {...common} placeholder="Number" value={typeof value === "number" ? value : ""} onChange={(v) => onChange(typeof v === "number" ? v : v === "" ? null : Number(v))} />
      );
    case "date":
      return (
        <DateTimePicker
          {...common}
          placeholder="Pick a date and time"
          valueFormat="D MMM YYYY, HH:mm"
          value={toPicker(value)}
          onChange={(v) => onChange(v ? dayjs(v).valueOf() : null)}
          clearable
          clearButtonProps={{ "aria-label": `Clear ${label}` }}
        />
      );
    case "boolean":
      return (
        <Select
          {...common}
          placeholder="Yes or no"
          data={[
            { value: "true", label: "Yes" },
            { value: "false", label: "No" },
          ]}
          value={value === null ? null : String(value)}
          onChange={(v) => onChange(v === null ? null : v === "true")}
          allowDeselect={false}
        />
      );
    case "choice":
      return list ? (
        <MultiSelect {...common} placeholder="Options" data={prop.options ?? []} value={Array.isArray(value) ? value.map(String) : []} onChange={(v) => onChange(v)} />
      ) : (
        <Select {...common} placeholder="Option" data={prop.options ?? []} value={typeof value === "string" ? value : null} onChange={(v) => onChange(v)} allowDeselect={false} />
      );
    default:
      return list ? (
        <TagsInput {...common} placeholder="Values, Enter after each" value={Array.isArray(value) ? value.map(String) : []} onChange={(v) => onChange(v)} />
      ) : (
        <TextInput
          {...common}
          placeholder={op === "like" ? "At least 3 characters" : "Value"}
          value={typeof value === "string" ? value : ""}
          onChange={(e) => onChange(e.currentTarget.value === "" ? null : e.currentTarget.value)}
        />
      );
  }
}
