// The rules a field's type offers (lib/fieldTypes.ts), each with the
// input that fits it: lengths, a pattern checked live, bounds (dates as
// dates), allowed values or a choice field's options, the default value in
// the field's own shape, a relation's target module, a URL's file types.
import {
  ActionIcon,
  Button,
  ColorInput,
  Group,
  MultiSelect,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  TagsInput,
  Text,
  TextInput,
  Textarea,
} from "@mantine/core";
import { IconArrowDown, IconArrowUp, IconCheck, IconPlus, IconX } from "@tabler/icons-react";
import dayjs from "dayjs";
import { useRef, useState } from "react";
import { fieldType } from "../../../lib/fieldTypes";
import type { Module } from "../api";
import { defaultIsJson, regexError, type DraftField, type DraftRules, type FieldErrors } from "./draft";

interface Props {
  field: DraftField;
  errors: FieldErrors;
  disabled: boolean;
  /** The app's modules, for a relation's target. */
  modules: Module[];
  moduleId: string;
  onRules: (r: Partial<DraftRules>) => void;
}

const toLocal = (ms: string | number | undefined) =>
  ms === undefined || ms === "" || !Number.isFinite(Number(ms)) ? "" : dayjs(Number(ms)).format("YYYY-MM-DDTHH:mm");
const fromLocal = (s: string) => (s ? String(dayjs(s).valueOf()) : "");

export function RulesEditor({ field, errors, disabled, modules, moduleId, onRules }: Props) {
  const t = fieldType(field.type);
  if (!t) return null;
  const r = field.rules;
  const has = (x: (typeof t.rules)[number]) => t.rules.includes(x);
  const name = field.name || "this field";
  const dates = t.kind === "timestamp";
  const choice = t.kind === "choice" || t.kind === "choices";

  return (
    <Stack gap="sm">
      {(has("minLength") || has("maxLength")) && (
        <SimpleGrid cols={{ base: 1, xs: 2 }}>
          <NumberInput
            label="Minimum length"
            description="Characters"
            min={0}
            allowDecimal={false}
            allowNegative={false}
            value={r.minLength}
            onChange={(v) => onRules({ minLength: String(v) })}
            error={errors.minLength}
            disabled={disabled}
          />
          <NumberInput
            label="Maximum length"
            description={t.id === "000000000000000000000001" ? "Characters; 1000 when empty" : "Characters; no limit when empty"}
            min={0}
            allowDecimal={false}
            allowNegative={false}
            value={r.maxLength}
            onChange={(v) => onRules({ maxLength: String(v) })}
            error={errors.maxLength}
            disabled={disabled}
          />
        </SimpleGrid>
      )}
      {has("pattern") && <PatternInput value={r.pattern} error={errors.pattern} disabled={disabled} onChange={(pattern) => onRules({ pattern })} />}
      {(has("min") || has("max")) &&
        (dates ? (
          <SimpleGrid cols={{ base: 1, xs: 2 }}>
            <TextInput
              type="datetime-local"
              label="Earliest"
              description="In your time zone"
              value={toLocal(r.min)}
              onChange={(e) => onRules({ min: fromLocal(e.currentTarget.value) })}
              error={errors.min}
              disabled={disabled}
            />
            <TextInput
              type="datetime-local"
              label="Latest"
              description="In your time zone"
              value={toLocal(r.max)}
              onChange={(e) => onRules({ max: fromLocal(e.currentTarget.value) })}
              error={errors.max}
              disabled={disabled}
            />
          </SimpleGrid>
        ) : (
          <SimpleGrid cols={{ base: 1, xs: 2 }}>
            <NumberInput
              label="Minimum"
              value={r.min}
              onChange={(v) => onRules({ min: String(v) })}
              error={errors.min}
              disabled={disabled}
            />
            <NumberInput
              label="Maximum"
              value={r.max}
              onChange={(v) => onRules({ max: String(v) })}
              error={errors.max}
              disabled={disabled}
            />
          </SimpleGrid>
        ))}
      {has("values") &&
        (choice ? (
          <OptionsEditor values={r.values} error={errors.values} disabled={disabled} onChange={(values) => onRules({ values })} />
        ) : (
          <TagsInput
            label="Allowed values"
            description={`Only these ${t.kind === "number" ? "numbers" : "texts"}; empty allows any. Press Enter after each.`}
            value={r.values}
            onChange={(values) => onRules({ values })}
            error={errors.values}
            disabled={disabled}
            clearable
          />
        ))}
      {has("mediaTypes") && (
        <TagsInput
          label="File types"
          description="The extensions the address may end in, such as jpg or pdf; empty allows any. Press Enter after each."
          value={r.mediaTypes}
          onChange={(mediaTypes) => onRules({ mediaTypes: mediaTypes.map((m) => m.replace(/^\./, "").toLowerCase()) })}
          error={errors.mediaTypes}
          disabled={disabled}
          clearable
        />
      )}
      {has("module") && (
        <Select
          key={modules.length ? "ready" : "loading"}
          label="Related items come from"
          description="A module of this app; empty allows items of any module of the app."
          placeholder="Any module of this app"
          data={modules.map((m) => ({ value: m.id, label: m.id === moduleId ? `${m.name} (this module)` : m.name }))}
          value={r.module || null}
          onChange={(v) => onRules({ module: v ?? "" })}
          error={errors.module}
          disabled={disabled}
          clearable
          searchable
          nothingFoundMessage="No module of that name"
        />
      )}
      {has("default") && <DefaultInput field={field} error={errors.default} disabled={disabled} onChange={(d) => onRules({ default: d })} name={name} />}
    </Stack>
  );
}

/** PatternInput: a regular expression, checked as typed, with a value to try it on. */
function PatternInput({ value, error, disabled, onChange }: { value: string; error?: string; disabled: boolean; onChange: (v: string) => void }) {
  const [sample, setSample] = useState("");
  const bad = value ? regexError(value) : undefined;
  let verdict: boolean | undefined;
  if (value && !bad && sample) verdict = new RegExp(`^(?:${value})$`, "u").test(sample);
  return (
    <SimpleGrid cols={{ base: 1, xs: 2 }}>
      <TextInput
        label="Pattern"
        description="A regular expression (RE2) the whole value must match"
        placeholder="e.g. [A-Z]{2}-\d{4}"
        value={value}
        onChange={(e) => onChange(e.currentTarget.value)}
        error={error ?? bad}
        disabled={disabled}
        styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
      />
      <TextInput
        label="Try the pattern"
        description={value ? "Type a value to see whether it matches" : "Write a pattern first"}
        value={sample}
        onChange={(e) => setSample(e.currentTarget.value)}
        disabled={!value || !!bad}
        rightSectionWidth={120}
        rightSection={
          verdict === undefined ? null : (
            <Group gap={4} wrap="nowrap" aria-live="polite">
              {verdict ? <IconCheck size={16} color="var(--mantine-color-green-9)" aria-hidden /> : <IconX size={16} color="var(--mantine-color-red-9)" aria-hidden />}
              <Text size="sm" fw={600}>
                {verdict ? "Matches" : "No match"}
              </Text>
            </Group>
          )
        }
      />
    </SimpleGrid>
  );
}

/** OptionsEditor: a choice field's options, in order. */
function OptionsEditor({ values, error, disabled, onChange }: { values: string[]; error?: string; disabled: boolean; onChange: (v: string[]) => void }) {
  const inputs = useRef<(HTMLInputElement | null)[]>([]);
  const focus = (i: number) => requestAnimationFrame(() => inputs.current[i]?.focus());
  const set = (i: number, v: string) => onChange(values.map((x, j) => (j === i ? v : x)));
  const move = (i: number, d: number) => {
    const next = [...values];
    [next[i], next[i + d]] = [next[i + d], next[i]];
    onChange(next);
  };
  const add = (at = values.length) => {
    onChange([...values.slice(0, at), "", ...values.slice(at)]);
    focus(at);
  };
  return (
    <Stack gap={6} role="group" aria-label="Options">
      <div>
        <Text size="sm" fw={500}>
          Options <span aria-hidden>*</span>
        </Text>
        <Text size="xs" c="dimmed">
          What editors choose from, in this order. Items store the option's text.
        </Text>
      </div>
      {values.map((v, i) => (
        <Group key={i} gap={4} wrap="nowrap">
          <TextInput
            ref={(el) => {
              inputs.current[i] = el;
            }}
            aria-label={`Option ${i + 1}`}
            value={v}
            onChange={(e) => set(i, e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                add(i + 1);
              }
            }}
            disabled={disabled}
            style={{ flex: 1 }}
          />
          <ActionIcon variant="subtle" aria-label={`Move option ${i + 1} up`} disabled={disabled || i === 0} onClick={() => move(i, -1)}>
            <IconArrowUp size={16} aria-hidden />
          </ActionIcon>
          <ActionIcon
            variant="subtle"
            aria-label={`Move option ${i + 1} down`}
            disabled={disabled || i === values.length - 1}
            onClick={() => move(i, 1)}
          >
            <IconArrowDown size={16} aria-hidden />
          </ActionIcon>
          <ActionIcon
            variant="subtle"
            color="red.9"
            aria-label={`Remove option ${i + 1}`}
            disabled={disabled}
            onClick={() => {
              onChange(values.filter((_, j) => j !== i));
              focus(Math.max(0, i - 1));
            }}
          >
            <IconX size={16} aria-hidden />
          </ActionIcon>
        </Group>
      ))}
      {error && (
        <Text size="xs" c="red.9" role="alert">
          {error}
        </Text>
      )}
      <Group>
        <Button variant="light" size="xs" leftSection={<IconPlus size={14} aria-hidden />} onClick={() => add()} disabled={disabled}>
          Add option
        </Button>
      </Group>
    </Stack>
  );
}

/** DefaultInput: the value the item editor proposes, in the field's own shape. */
function DefaultInput({
  field,
  error,
  disabled,
  onChange,
  name,
}: {
  field: DraftField;
  error?: string;
  disabled: boolean;
  onChange: (v: unknown) => void;
  name: string;
}) {
  const t = fieldType(field.type)!;
  const d = field.rules.default;
  const label = "Default value";
  const description = `What a new item's ${name} starts with; empty for none.`;
  const common = { label, description, error, disabled };
  if (defaultIsJson(field)) {
    const example = t.kind === "list" ? '["a", "b"]' : t.kind === "object" ? '{"key": "value"}' : '{"en": "Hello", "nl": "Hallo"}';
    return (
      <Textarea
        {...common}
        description={`${description} JSON, such as ${example}${t.kind === "text" ? " (a text per locale)" : ""}.`}
        autosize
        minRows={2}
        value={typeof d === "string" ? d : ""}
        onChange={(e) => onChange(e.currentTarget.value || undefined)}
        styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
      />
    );
  }
  switch (t.kind) {
    case "number":
      return <NumberInput {...common} value={typeof d === "number" ? d : ""} onChange={(v) => onChange(typeof v === "number" ? v : undefined)} />;
    case "timestamp":
      return (
        <TextInput
          {...common}
          type="datetime-local"
          value={toLocal(typeof d === "number" ? d : undefined)}
          onChange={(e) => onChange(e.currentTarget.value ? dayjs(e.currentTarget.value).valueOf() : undefined)}
        />
      );
    case "boolean":
      return (
        <Select
          {...common}
          data={[
            { value: "", label: "No default" },
            { value: "true", label: "Yes" },
            { value: "false", label: "No" },
          ]}
          value={d === true ? "true" : d === false ? "false" : ""}
          onChange={(v) => onChange(v === "true" ? true : v === "false" ? false : undefined)}
          allowDeselect={false}
        />
      );
    case "color":
      return (
        <ColorInput
          {...common}
          format="hex"
          value={typeof d === "string" ? d : ""}
          onChange={(v) => onChange(v || undefined)}
          eyeDropperButtonProps={{ "aria-label": "Pick a colour from the screen" }}
        />
      );
    case "choice":
      return (
        <Select
          {...common}
          placeholder="No default"
          data={[...new Set(field.rules.values.filter(Boolean))]}
          value={typeof d === "string" ? d : null}
          onChange={(v) => onChange(v ?? undefined)}
          clearable
        />
      );
    case "choices":
      return (
        <MultiSelect
          {...common}
          placeholder="No default"
          data={[...new Set(field.rules.values.filter(Boolean))]}
          value={Array.isArray(d) ? (d as string[]) : []}
          onChange={(v) => onChange(v.length ? v : undefined)}
          clearable
        />
      );
    default:
      return (
        <TextInput
          {...common}
          description={t.kind === "localized" ? `${description} The same text for every locale.` : description}
          value={typeof d === "string" ? d : ""}
          onChange={(e) => onChange(e.currentTarget.value || undefined)}
        />
      );
  }
}
