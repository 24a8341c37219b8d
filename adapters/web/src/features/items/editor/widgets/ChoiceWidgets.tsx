// One or some of a field's options (rules.values): a dropdown, radio
// buttons, a multi-select or checkboxes.
import { Checkbox, Group, MultiSelect, Radio, Select } from "@mantine/core";
import { str, type WidgetProps } from "./props";

const options = (p: WidgetProps) => p.field.rules.values ?? [];
const many = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

export function SelectWidget(p: WidgetProps) {
  return (
    <Select
      id={p.id}
      label={p.label}
      description={p.description}
      withAsterisk={p.required}
      data={options(p)}
      value={str(p.value) || null}
      onChange={(v) => p.onChange(v)}
      clearable={!p.required}
      searchable={options(p).length > 8}
      error={p.error}
      readOnly={p.readOnly}
    />
  );
}

export function RadioWidget(p: WidgetProps) {
  return (
    <Radio.Group
      id={p.id}
      label={p.label}
      description={p.description}
      withAsterisk={p.required}
      value={str(p.value) || null}
      onChange={(v) => p.onChange(v || null)}
      error={p.error}
      readOnly={p.readOnly}
    >
      <Group mt={6}>
        {options(p).map((o) => (
          <Radio key={o} value={o} label={o} disabled={p.readOnly} />
        ))}
      </Group>
    </Radio.Group>
  );
}

export function MultiSelectWidget(p: WidgetProps) {
  return (
    <MultiSelect
      id={p.id}
      label={p.label}
      description={p.description}
      withAsterisk={p.required}
      data={options(p)}
      value={many(p.value)}
      onChange={(v) => p.onChange(v.length ? v : null)}
      clearable={!p.readOnly}
      searchable
      error={p.error}
      readOnly={p.readOnly}
    />
  );
}

export function CheckboxesWidget(p: WidgetProps) {
  return (
    <Checkbox.Group
      id={p.id}
      label={p.label}
      description={p.description}
      withAsterisk={p.required}
      value={many(p.value)}
      // Keep the options' order, whatever order they were ticked in.
      onChange={(v) => p.onChange(v.length ? options(p).filter((o) => v.includes(o)) : null)}
      error={p.error}
      readOnly={p.readOnly}
    >
      <Group mt={6}>
        {options(p).map((o) => (
          <Checkbox key={o} value={o} label={o} disabled={p.readOnly} />
        ))}
      </Group>
    </Checkbox.Group>
  );
}
