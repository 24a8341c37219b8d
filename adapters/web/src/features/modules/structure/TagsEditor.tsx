// The tags a module's items may carry (empty: any), each a name with an
// optional value (a tag matches by id, else by name and value).
import { Button, Group, Pill, SimpleGrid, Stack, Text, TextInput } from "@mantine/core";
import { IconPlus } from "@tabler/icons-react";
import { useState, type FormEvent } from "react";
import { newKey, type DraftTag } from "./draft";

export function TagsEditor({
  tags,
  error,
  disabled,
  onChange,
}: {
  tags: DraftTag[];
  error?: string;
  disabled: boolean;
  onChange: (t: DraftTag[]) => void;
}) {
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const taken = tags.some((t) => t.name === name.trim() && t.value === value.trim());

  function add(e?: FormEvent) {
    e?.preventDefault();
    if (!name.trim() || taken) return;
    onChange([...tags, { key: newKey(), name: name.trim(), value: value.trim() }]);
    setName("");
    setValue("");
  }

  return (
    <Stack gap={6}>
      <div>
        <Text size="sm" fw={500} id="tags-label">
          Allowed tags
        </Text>
        <Text size="xs" c="dimmed">
          The segmentation tags this module's items may carry. None listed: items may carry any tag.
        </Text>
      </div>
      <Group gap={6} role="list" aria-labelledby="tags-label">
        {tags.length === 0 && (
          <Text size="sm" c="dimmed" role="listitem">
            Any tag
          </Text>
        )}
        {tags.map((t) => (
          <Pill
            key={t.key}
            role="listitem"
            size="md"
            withRemoveButton={!disabled}
            removeButtonProps={{ "aria-label": `Remove tag ${t.name}${t.value ? ` = ${t.value}` : ""}` }}
            onRemove={() => onChange(tags.filter((x) => x.key !== t.key))}
          >
            {t.name}
            {t.value ? ` = ${t.value}` : ""}
          </Pill>
        ))}
      </Group>
      {!disabled && (
        <Stack gap={6}>
          <SimpleGrid cols={2} spacing="xs">
            <TextInput
              size="xs"
              label="Tag name"
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              onKeyDown={(e) => e.key === "Enter" && add(e)}
            />
            <TextInput
              size="xs"
              label="Value (optional)"
              value={value}
              onChange={(e) => setValue(e.currentTarget.value)}
              onKeyDown={(e) => e.key === "Enter" && add(e)}
            />
          </SimpleGrid>
          <Group>
            <Button size="xs" variant="light" leftSection={<IconPlus size={14} aria-hidden />} onClick={() => add()} disabled={!name.trim() || taken}>
              Add tag
            </Button>
          </Group>
        </Stack>
      )}
      {error && (
        <Text size="xs" c="red.9" role="alert">
          {error}
        </Text>
      )}
    </Stack>
  );
}
