// Localized text: one text per locale, the locales side by side (one
// column each). The editor chooses the locales shown (those the item
// holds, plus any added); an empty text removes its locale.
import { Fieldset, SimpleGrid, Text, TextInput, Textarea } from "@mantine/core";
import { fieldType } from "../../../../lib/fieldTypes";
import { Counter } from "./TextWidgets";
import { Legend } from "./Legend";
import { legendStyles, type WidgetProps } from "./props";

export function LocalizedWidget(p: WidgetProps) {
  const obj = p.value && typeof p.value === "object" && !Array.isArray(p.value) ? (p.value as Record<string, unknown>) : {};
  const locales = Array.from(new Set([...p.locales, ...Object.keys(obj)]));
  const long = fieldType(p.field.type)?.id === "000000000000000000000012";
  const set = (loc: string, s: string) => {
    const next = { ...obj, [loc]: s };
    if (s === "") delete next[loc];
    p.onChange(Object.keys(next).length ? next : null);
  };
  return (
    <Fieldset legend={<Legend label={p.label} required={p.required} />} id={p.id} variant="unstyled" styles={legendStyles}>
      {p.description && (
        <Text size="xs" c="dimmed" mb={4}>
          {p.description}
        </Text>
      )}
      {locales.length === 0 ? (
        <Text size="sm" c="dimmed">
          No locale yet: add one above the fields.
        </Text>
      ) : (
        <SimpleGrid cols={{ base: 1, sm: Math.min(locales.length, 3) }} spacing="sm">
          {locales.map((loc) => {
            const v = typeof obj[loc] === "string" ? (obj[loc] as string) : "";
            const common = {
              label: loc,
              "aria-label": `${p.label} (${loc})`,
              value: v,
              readOnly: p.readOnly,
              lang: loc.replace("_", "-"),
            };
            return (
              <div key={loc}>
                {long ? (
                  <Textarea {...common} autosize minRows={3} maxRows={12} onChange={(e) => set(loc, e.currentTarget.value)} />
                ) : (
                  <TextInput {...common} onChange={(e) => set(loc, e.currentTarget.value)} />
                )}
                <Counter value={v} field={p.field} />
              </div>
            );
          })}
        </SimpleGrid>
      )}
      {p.error && (
        <Text size="xs" c="red.8" role="alert" mt={4}>
          {p.error}
        </Text>
      )}
    </Fieldset>
  );
}
