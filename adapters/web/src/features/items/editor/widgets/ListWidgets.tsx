// Lists (JSON arrays) of texts, tags, JSON objects and arrays, and map
// locations.
import { ActionIcon, Button, Fieldset, Group, NumberInput, Stack, TagsInput, Text, TextInput, Textarea } from "@mantine/core";
import { IconArrowDown, IconArrowUp, IconPlus, IconTrash } from "@tabler/icons-react";
import { useEffect, useState } from "react";
import { same } from "../model";
import { Legend } from "./Legend";
import { legendStyles, type WidgetProps } from "./props";

export const textsOnly = (v: unknown): v is string[] | null | undefined =>
  v === null || v === undefined || (Array.isArray(v) && v.every((x) => typeof x === "string"));

/** ListWidget: texts to add, remove and reorder. */
export function ListWidget(p: WidgetProps) {
  const list = Array.isArray(p.value) ? (p.value as string[]) : [];
  const [next, setNext] = useState("");
  const set = (l: string[]) => p.onChange(l.length ? l : null);
  const move = (i: number, by: number) => {
    const l = [...list];
    [l[i], l[i + by]] = [l[i + by], l[i]];
    set(l);
  };
  const add = () => {
    if (next.trim() === "") return;
    set([...list, next]);
    setNext("");
  };
  return (
    <Fieldset legend={<Legend label={p.label} required={p.required} />} id={p.id} variant="unstyled" styles={legendStyles}>
      {p.description && (
        <Text size="xs" c="dimmed" mb={4}>
          {p.description}
        </Text>
      )}
      <Stack gap={6}>
        {list.length === 0 && (
          <Text size="sm" c="dimmed">
            No entries.
          </Text>
        )}
        {list.map((entry, i) => (
          <Group key={i} gap={6} wrap="nowrap">
            <TextInput
              aria-label={`${p.label}, entry ${i + 1}`}
              value={entry}
              onChange={(e) => set(list.map((x, j) => (j === i ? e.currentTarget.value : x)))}
              readOnly={p.readOnly}
              style={{ flex: 1 }}
            />
            {!p.readOnly && (
              <>
                <ActionIcon variant="subtle" color="gray.8" aria-label={`Move entry ${i + 1} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                  <IconArrowUp size={16} />
                </ActionIcon>
                <ActionIcon
                  variant="subtle"
                  color="gray.8"
                  aria-label={`Move entry ${i + 1} down`}
                  disabled={i === list.length - 1}
                  onClick={() => move(i, 1)}
                >
                  <IconArrowDown size={16} />
                </ActionIcon>
                <ActionIcon variant="subtle" color="red.8" aria-label={`Remove entry ${i + 1}`} onClick={() => set(list.filter((_, j) => j !== i))}>
                  <IconTrash size={16} />
                </ActionIcon>
              </>
            )}
          </Group>
        ))}
        {!p.readOnly && (
          <Group gap={6} wrap="nowrap">
            <TextInput
              aria-label={`New entry of ${p.label}`}
              placeholder="New entry"
              value={next}
              onChange={(e) => setNext(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter") {
                  e.preventDefault();
                  add();
                }
              }}
              style={{ flex: 1 }}
            />
            <Button variant="light" leftSection={<IconPlus size={16} />} onClick={add} aria-label={`Add an entry to ${p.label}`}>
              Add
            </Button>
          </Group>
        )}
        {p.error && (
          <Text size="xs" c="red.8" role="alert">
            {p.error}
          </Text>
        )}
      </Stack>
    </Fieldset>
  );
}

export function TagsWidget(p: WidgetProps) {
  return (
    <TagsInput
      id={p.id}
      label={p.label}
      description={p.description ?? "Type a tag and press Enter"}
      withAsterisk={p.required}
      value={Array.isArray(p.value) ? (p.value as string[]) : []}
      onChange={(v) => p.onChange(v.length ? v : null)}
      clearable={!p.readOnly}
      error={p.error}
      readOnly={p.readOnly}
    />
  );
}

const pretty = (v: unknown) => (v === null || v === undefined ? "" : JSON.stringify(v, null, 2));

/** JsonWidget: a JSON object or array, checked as it is typed. */
export function JsonWidget(p: WidgetProps & { shape: "object" | "array" }) {
  const [text, setText] = useState(pretty(p.value));
  const [bad, setBad] = useState<string>();
  const { onInvalid } = p;
  // A value changed from outside (a merge, a reload) replaces the text.
  useEffect(() => {
    setText((t) => {
      try {
        if (t.trim() !== "" && same(JSON.parse(t), p.value)) return t;
      } catch {
        /* replaced below */
      }
      return t.trim() === "" && (p.value === null || p.value === undefined) ? t : pretty(p.value);
    });
  }, [p.value]);
  useEffect(() => onInvalid(bad), [bad, onInvalid]);

  const change = (t: string) => {
    setText(t);
    if (t.trim() === "") {
      setBad(undefined);
      p.onChange(null);
      return;
    }
    try {
      const v = JSON.parse(t);
      const isArray = Array.isArray(v);
      if (p.shape === "array" ? !isArray : isArray || v === null || typeof v !== "object") {
        setBad(p.shape === "array" ? "Must be a JSON array: [ … ]" : "Must be a JSON object: { … }");
        return;
      }
      setBad(undefined);
      p.onChange(v);
    } catch (e) {
      setBad(`Not valid JSON: ${(e as Error).message}`);
    }
  };
  return (
    <Textarea
      id={p.id}
      label={p.label}
      description={p.description ?? (p.shape === "array" ? "JSON array" : "JSON object")}
      withAsterisk={p.required}
      value={text}
      onChange={(e) => change(e.currentTarget.value)}
      autosize
      minRows={3}
      maxRows={14}
      styles={{ input: { fontFamily: "ui-monospace, monospace", fontSize: 13 } }}
      error={bad ?? p.error}
      readOnly={p.readOnly}
      spellCheck={false}
    />
  );
}

/** LocationWidget: an Object field holding {lat, lng} (or {latitude, longitude}). */
export function LocationWidget(p: WidgetProps) {
  const obj = p.value && typeof p.value === "object" && !Array.isArray(p.value) ? (p.value as Record<string, unknown>) : {};
  const long = "latitude" in obj || "longitude" in obj;
  const [latKey, lngKey] = long ? ["latitude", "longitude"] : ["lat", "lng"];
  const num = (x: unknown) => (typeof x === "number" ? x : "");
  const set = (key: string, v: number | string) => {
    const next: Record<string, unknown> = { ...obj, [key]: typeof v === "number" ? v : undefined };
    if (next[key] === undefined) delete next[key];
    p.onChange(Object.keys(next).length ? next : null);
  };
  const lat = obj[latKey];
  const lng = obj[lngKey];
  const { onInvalid } = p;
  const bad =
    (typeof lat === "number" && Math.abs(lat) > 90) || (typeof lng === "number" && Math.abs(lng) > 180)
      ? "The latitude must be between -90 and 90, the longitude between -180 and 180"
      : (typeof lat === "number") !== (typeof lng === "number")
        ? "Give both the latitude and the longitude"
        : undefined;
  useEffect(() => onInvalid(bad), [bad, onInvalid]);
  return (
    <Fieldset legend={<Legend label={p.label} required={p.required} />} id={p.id} variant="unstyled" styles={legendStyles}>
      {p.description && (
        <Text size="xs" c="dimmed" mb={4}>
          {p.description}
        </Text>
      )}
      <Group grow align="flex-start">
        <NumberInput
          label="Latitude"
          aria-label={`${p.label}: latitude`}
          min={-90}
          max={90}
          decimalScale={7}
          value={num(lat)}
          onChange={(v) => set(latKey, v)}
          readOnly={p.readOnly}
          error={typeof lat === "number" && Math.abs(lat) > 90 ? "Between -90 and 90" : undefined}
        />
        <NumberInput
          label="Longitude"
          aria-label={`${p.label}: longitude`}
          min={-180}
          max={180}
          decimalScale={7}
          value={num(lng)}
          onChange={(v) => set(lngKey, v)}
          readOnly={p.readOnly}
          error={typeof lng === "number" && Math.abs(lng) > 180 ? "Between -180 and 180" : undefined}
        />
      </Group>
      {p.error && (
        <Text size="xs" c="red.8" role="alert" mt={4}>
          {p.error}
        </Text>
      )}
    </Fieldset>
  );
}
