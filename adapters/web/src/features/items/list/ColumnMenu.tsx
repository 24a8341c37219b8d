// The column chooser: a checkbox per attribute and field.
import { Button, Checkbox, Divider, Popover, ScrollArea, Stack, Text } from "@mantine/core";
import { IconColumns } from "@tabler/icons-react";
import { STATE } from "./columns";
import type { Prop } from "./props";

interface Props {
  props: Prop[];
  shown: string[];
  onChange: (keys: string[]) => void;
  onReset: () => void;
}

export function ColumnMenu({ props, shown, onChange, onReset }: Props) {
  const on = new Set(shown);
  const order = [STATE, ...props.map((p) => p.key)];
  const toggle = (key: string, checked: boolean) => {
    const next = new Set(on);
    if (checked) next.add(key);
    else next.delete(key);
    onChange(order.filter((k) => next.has(k)));
  };
  const box = (key: string, label: string) => (
    <Checkbox key={key} label={label} checked={on.has(key)} onChange={(e) => toggle(key, e.currentTarget.checked)} size="sm" />
  );
  const fields = props.filter((p) => !p.meta);
  return (
    <Popover position="bottom-end" shadow="md" width={260} trapFocus>
      <Popover.Target>
        <Button variant="default" leftSection={<IconColumns size={16} aria-hidden />}>
          Columns
        </Button>
      </Popover.Target>
      <Popover.Dropdown aria-label="Columns to show">
        <ScrollArea.Autosize mah={380} type="auto">
          <Stack gap={6}>
            <Text size="xs" fw={700} c="dimmed" tt="uppercase">
              Fields
            </Text>
            {fields.length === 0 && <Text size="sm">This module has no fields.</Text>}
            {fields.map((p) => box(p.key, p.label))}
            <Divider my={4} />
            <Text size="xs" fw={700} c="dimmed" tt="uppercase">
              Attributes
            </Text>
            {box(STATE, "State")}
            {props.filter((p) => p.meta && p.key !== "name").map((p) => box(p.key, p.label))}
            <Divider my={4} />
            <Button size="xs" variant="subtle" onClick={onReset}>
              Default columns
            </Button>
          </Stack>
        </ScrollArea.Autosize>
      </Popover.Dropdown>
    </Popover>
  );
}
