// One field of the structure editor: a header that names it and moves,
// opens or removes it, and, when open, its form.
import { ActionIcon, Alert, Badge, Code, Group, Paper, Select, SimpleGrid, Stack, Switch, Text, TextInput, Textarea, Tooltip } from "@mantine/core";
import { IconArrowDown, IconArrowUp, IconChevronDown, IconChevronUp, IconTrash } from "@tabler/icons-react";
import dayjs from "dayjs";
import { forwardRef } from "react";
import { fieldType, fieldTypes, type Widget } from "../../../lib/fieldTypes";
import type { Module } from "../api";
import { relocalize, retype, type DraftField, type FieldErrors } from "./draft";
import { RulesEditor } from "./RulesEditor";

const groups: { group: string; ids: number[] }[] = [
  { group: "Text", ids: [1, 12, 15] },
  { group: "Numbers, dates, yes or no", ids: [2, 6, 7, 8] },
  { group: "Choices", ids: [18, 17, 20, 19] },
  { group: "Relations to other items", ids: [11, 10] },
  { group: "Media and links", ids: [5, 16, 21, 3, 4] },
  { group: "Other", ids: [9, 13, 14] },
];
const typeData = groups.map((g) => ({
  group: g.group,
  items: g.ids.map((n) => {
    const t = fieldTypes[n - 1];
    return { value: t.id, label: t.name };
  }),
}));

const widgetNames: Record<Widget, string> = {
  text: "Single line",
  textarea: "Plain text area",
  richtext: "Rich text",
  markdown: "Markdown",
  html: "HTML source",
  number: "Number",
  url: "Address",
  image: "Image",
  video: "Video",
  audio: "Audio",
  document: "Document",
  youtube: "YouTube video",
  date: "Date only",
  datetime: "Date and time",
  time: "Time",
  boolean: "Switch",
  color: "Colour picker",
  relation: "Item picker",
  relations: "Items picker",
  json: "JSON",
  location: "Map location",
  list: "List of texts",
  tags: "Tags",
  localized: "A text per locale",
  select: "Dropdown",
  multiselect: "Dropdown, several",
  radio: "Radio buttons",
  checkboxes: "Checkboxes",
};

/** summary: the field's rules in a few words, for the closed card. */
function summary(f: DraftField, modules: Module[]): string {
  const r = f.rules;
  const date = fieldType(f.type)?.kind === "timestamp";
  const v = (x: string) => (date && x ? dayjs(Number(x)).format("D MMM YYYY, HH:mm") : x);
  const shown = (d: unknown) => (typeof d === "boolean" ? (d ? "yes" : "no") : typeof d === "string" ? d : date ? v(String(d)) : JSON.stringify(d));
  const parts: string[] = [];
  if (r.minLength || r.maxLength) parts.push(`${r.minLength || 0}–${r.maxLength || "∞"} characters`);
  if (r.pattern) parts.push(`pattern ${r.pattern}`);
  if (r.min) parts.push(`from ${v(r.min)}`);
  if (r.max) parts.push(`to ${v(r.max)}`);
  if (r.values.length) parts.push(`${fieldType(f.type)?.kind.startsWith("choice") ? "options" : "only"} ${r.values.join(", ")}`);
  if (r.mediaTypes.length) parts.push(r.mediaTypes.join(", "));
  if (r.module) parts.push(`items of ${modules.find((m) => m.id === r.module)?.name ?? "another module"}`);
  if (r.default !== undefined && r.default !== "") parts.push(`default ${shown(r.default)}`);
  return parts.join(" · ");
}

interface Props {
  field: DraftField;
  index: number;
  count: number;
  open: boolean;
  errors: FieldErrors;
  /** The API's refusal naming this field. */
  serverError?: string;
  disabled: boolean;
  modules: Module[];
  moduleId: string;
  onToggle: () => void;
  onChange: (f: DraftField) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}

export const FieldCard = forwardRef<HTMLDivElement, Props>(function FieldCard(
  { field, index, count, open, errors, serverError, disabled, modules, moduleId, onToggle, onChange, onMove, onRemove },
  ref,
) {
  const t = fieldType(field.type);
  const label = field.name || `field ${index + 1}`;
  const problems = Object.keys(errors).length + (serverError ? 1 : 0);
  const bodyId = `field-body-${field.key}`;
  const set = (p: Partial<DraftField>) => onChange({ ...field, ...p });
  const key = /^[A-Za-z_$][\w$]*$/.test(field.name) ? `values.${field.name}` : `values[${JSON.stringify(field.name)}]`;

  return (
    <Paper
      ref={ref}
      withBorder
      p="sm"
      id={`field-${field.key}`}
      tabIndex={-1}
      style={problems ? { borderColor: "var(--mantine-color-red-7)" } : undefined}
      aria-label={`Field ${index + 1}: ${label}`}
      component="section"
    >
      <Group justify="space-between" wrap="nowrap" gap="xs">
        <Group gap="xs" wrap="wrap" style={{ minWidth: 0 }}>
          <Text size="sm" c="dimmed" w={22} ta="right">
            {index + 1}.
          </Text>
          <Text fw={600} style={{ overflowWrap: "anywhere" }} fs={field.name ? undefined : "italic"}>
            {field.name || "New field"}
          </Text>
          <Badge variant="light" color="indigo" tt="none">
            {t?.name ?? "No type"}
          </Badge>
          {field.required && (
            <Badge variant="outline" color="gray.8" tt="none">
              required
            </Badge>
          )}
          {field.localized && (
            <Badge variant="outline" color="gray.8" tt="none">
              localized
            </Badge>
          )}
          {problems > 0 && (
            <Badge color="red.9" variant="filled" tt="none">
              {problems === 1 ? "1 problem" : `${problems} problems`}
            </Badge>
          )}
          {!open && summary(field, modules) && (
            <Text size="xs" c="dimmed" lineClamp={1} style={{ flexBasis: "100%", paddingLeft: 30 }}>
              {summary(field, modules)}
            </Text>
          )}
        </Group>
        <Group gap={2} wrap="nowrap">
          <Tooltip label="Move up">
            <ActionIcon
              variant="subtle"
              id={`up-${field.key}`}
              aria-label={`Move ${label} up`}
              disabled={disabled || index === 0}
              onClick={() => onMove(-1)}
            >
              <IconArrowUp size={18} aria-hidden />
            </ActionIcon>
          </Tooltip>
          <Tooltip label="Move down">
            <ActionIcon
              variant="subtle"
              id={`down-${field.key}`}
              aria-label={`Move ${label} down`}
              disabled={disabled || index === count - 1}
              onClick={() => onMove(1)}
            >
              <IconArrowDown size={18} aria-hidden />
            </ActionIcon>
          </Tooltip>
          <Tooltip label="Remove">
            <ActionIcon variant="subtle" color="red.9" aria-label={`Remove ${label}`} disabled={disabled} onClick={onRemove}>
              <IconTrash size={18} aria-hidden />
            </ActionIcon>
          </Tooltip>
          <Tooltip label={open ? "Close" : "Edit"}>
            <ActionIcon variant="subtle" aria-label={`Edit ${label}`} aria-expanded={open} aria-controls={open ? bodyId : undefined} onClick={onToggle}>
              {open ? <IconChevronUp size={18} aria-hidden /> : <IconChevronDown size={18} aria-hidden />}
            </ActionIcon>
          </Tooltip>
        </Group>
      </Group>

      {open && (
        <Stack gap="sm" mt="sm" id={bodyId}>
          {serverError && (
            <Alert color="red" title="The server refused this field" role="alert">
              {serverError}
            </Alert>
          )}
          {errors.general && (
            <Alert color="red" role="alert">
              {errors.general}
            </Alert>
          )}
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput
              label="Name"
              required
              description={
                <>
                  The JSON key: items hold the value as <Code>{key}</Code>, which apps and searches use.
                </>
              }
              value={field.name}
              onChange={(e) => set({ name: e.currentTarget.value })}
              error={errors.name}
              disabled={disabled}
              maxLength={100}
              data-autofocus
            />
            <Select
              label="Type"
              required
              description={t?.hint}
              data={typeData}
              value={field.type}
              onChange={(v) => v && onChange(retype(field, v))}
              allowDeselect={false}
              error={errors.type}
              disabled={disabled}
              maxDropdownHeight={320}
              comboboxProps={{ withinPortal: true }}
            />
          </SimpleGrid>
          {t && t.widgets.length > 1 && (
            <Select
              label="Editor widget"
              description="How the item editor shows this field"
              data={t.widgets.map((w) => ({ value: w, label: widgetNames[w] }))}
              value={field.rules.widget || t.widgets[0]}
              onChange={(v) => set({ rules: { ...field.rules, widget: v && v !== t.widgets[0] ? v : "" } })}
              allowDeselect={false}
              disabled={disabled}
            />
          )}
          <Group gap="xl" wrap="wrap" align="flex-start">
            <Switch
              label="Required"
              description="Every item must have a value"
              checked={field.required}
              onChange={(e) => set({ required: e.currentTarget.checked })}
              disabled={disabled}
            />
            {t?.kind === "text" && (
              <Switch
                label="Localized"
                description="One text per locale; editors pick the locales in each item"
                checked={field.localized}
                onChange={(e) => onChange(relocalize(field, e.currentTarget.checked))}
                disabled={disabled}
              />
            )}
          </Group>
          <Textarea
            label="Description"
            description="Help for editors, shown with the field in the item editor"
            autosize
            minRows={1}
            value={field.description}
            onChange={(e) => set({ description: e.currentTarget.value })}
            disabled={disabled}
          />
          {t && t.rules.length > 0 && (
            <Stack gap={4}>
              <Text fw={600} size="sm">
                Rules
              </Text>
              <RulesEditor
                field={field}
                errors={errors}
                disabled={disabled}
                modules={modules}
                moduleId={moduleId}
                onRules={(r) => set({ rules: { ...field.rules, ...r } })}
              />
            </Stack>
          )}
        </Stack>
      )}
    </Paper>
  );
});
