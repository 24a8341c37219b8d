// Above the fields: the time zone dates are shown in, and the locales of
// localized texts (side by side), with a control to add one.
import { ActionIcon, Badge, Group, Select, Text, TextInput, Tooltip } from "@mantine/core";
import { IconPlus, IconX } from "@tabler/icons-react";
import { useState } from "react";
import { localeRE } from "./validate";
import { allZones } from "./zones";

export function ZonePicker({ zone, onChange }: { zone: string; onChange: (z: string) => void }) {
  return (
    <Select
      label="Time zone"
      description="Dates are shown and edited in this zone"
      data={allZones()}
      value={zone}
      onChange={(z) => z && onChange(z)}
      searchable
      allowDeselect={false}
      maw={280}
      comboboxProps={{ withinPortal: true }}
    />
  );
}

export function LocalesPicker(p: { locales: string[]; held: string[]; onChange: (l: string[]) => void; readOnly: boolean }) {
  const [next, setNext] = useState("");
  const bad = next !== "" && !localeRE.test(next);
  const add = () => {
    if (!next || bad || p.locales.includes(next)) return;
    p.onChange([...p.locales, next]);
    setNext("");
  };
  return (
    <Group gap="xs" align="flex-end">
      <div>
        <Text size="sm" fw={600} id="locales-label">
          Locales
        </Text>
        <Text size="xs" c="dimmed" mb={4}>
          Localized texts show one column per locale
        </Text>
        <Group gap={4} mb={6} role="list" aria-labelledby="locales-label">
          {p.locales.map((l) => (
            <Badge
              key={l}
              role="listitem"
              variant="outline"
              color="indigo.8"
              tt="none"
              rightSection={
                !p.held.includes(l) ? (
                  <ActionIcon size="xs" variant="transparent" color="indigo.8" aria-label={`Hide locale ${l}`} onClick={() => p.onChange(p.locales.filter((x) => x !== l))}>
                    <IconX size={12} />
                  </ActionIcon>
                ) : undefined
              }
            >
              {l}
            </Badge>
          ))}
        </Group>
        {!p.readOnly && (
          <Group gap={4} align="flex-start">
            <TextInput
              label="Add a locale"
              placeholder="e.g. fr or en-US"
              size="xs"
              value={next}
              onChange={(e) => setNext(e.currentTarget.value.trim())}
              onKeyDown={(e) => {
                if (e.key === "Enter") {
                  e.preventDefault();
                  add();
                }
              }}
              error={bad ? "A locale code such as en, en-US or zh_Hant" : undefined}
              w={180}
            />
            <Tooltip label="Add the locale">
              <ActionIcon mt={24} variant="light" aria-label="Add the locale" onClick={add} disabled={!next || bad}>
                <IconPlus size={16} />
              </ActionIcon>
            </Tooltip>
          </Group>
        )}
      </div>
    </Group>
  );
}
