// LocaleTexts: a file's alt text and caption, one row per locale; a
// locale is added by its code (en, nl-BE, ...) and removed with its row.
import { ActionIcon, Button, Fieldset, Group, Stack, Text, TextInput } from "@mantine/core";
import { IconPlus, IconTrash } from "@tabler/icons-react";
import { useState } from "react";

export type Texts = { locale: string; alt: string; caption: string }[];

const localeRE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

export function LocaleTexts(props: { value: Texts; onChange: (t: Texts) => void; readOnly: boolean; error?: string }) {
  const [locale, setLocale] = useState("");
  const [problem, setProblem] = useState<string>();
  const setRow = (i: number, p: Partial<Texts[number]>) => props.onChange(props.value.map((r, j) => (j === i ? { ...r, ...p } : r)));

  function add() {
    const l = locale.trim();
    if (!localeRE.test(l)) return setProblem("A locale code such as en, nl or pt-BR");
    if (props.value.some((r) => r.locale.toLowerCase() === l.toLowerCase())) return setProblem(`${l} is there already`);
    props.onChange([...props.value, { locale: l, alt: "", caption: "" }]);
    setLocale("");
    setProblem(undefined);
  }

  return (
    <Fieldset legend="Alt text and caption, per locale" variant="unstyled">
      <Stack gap="xs">
        {props.value.length === 0 && (
          <Text size="sm" c="dimmed">
            No alt text or caption yet.
          </Text>
        )}
        {props.value.map((r, i) => (
          <Group key={r.locale} align="end" gap="xs" wrap="nowrap">
            <Text fw={600} size="sm" w={48} pb={8}>
              {r.locale}
            </Text>
            <TextInput
              label={`Alt text (${r.locale})`}
              value={r.alt}
              onChange={(e) => setRow(i, { alt: e.currentTarget.value })}
              readOnly={props.readOnly}
              style={{ flex: 1 }}
            />
            <TextInput
              label={`Caption (${r.locale})`}
              value={r.caption}
              onChange={(e) => setRow(i, { caption: e.currentTarget.value })}
              readOnly={props.readOnly}
              style={{ flex: 1 }}
            />
            {!props.readOnly && (
              <ActionIcon variant="subtle" color="red" mb={4} aria-label={`Remove the locale ${r.locale}`} onClick={() => props.onChange(props.value.filter((_, j) => j !== i))}>
                <IconTrash size={16} aria-hidden />
              </ActionIcon>
            )}
          </Group>
        ))}
        {!props.readOnly && (
          <Group align="start" gap="xs">
            <TextInput
              aria-label="New locale"
              placeholder="Locale, e.g. en"
              value={locale}
              onChange={(e) => setLocale(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter") {
                  e.preventDefault();
                  add();
                }
              }}
              error={problem}
              w={160}
            />
            <Button variant="light" leftSection={<IconPlus size={14} aria-hidden />} onClick={add}>
              Add the locale
            </Button>
          </Group>
        )}
        {props.error && (
          <Text size="sm" c="red.8">
            {props.error}
          </Text>
        )}
      </Stack>
    </Fieldset>
  );
}
