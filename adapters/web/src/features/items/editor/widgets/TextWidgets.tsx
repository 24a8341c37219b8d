// Widgets for single values: text, long text, numbers, yes/no, colours,
// and addresses of web pages, images, videos, audio, documents and
// YouTube videos (with a preview). Media addresses can also be chosen
// from the app's library.
import { Anchor, Box, ColorInput, Group, Image, NumberInput, Stack, Switch, Text, TextInput, Textarea } from "@mantine/core";
import { fieldType } from "../../../../lib/fieldTypes";
import { smallPreview } from "../../../media/format";
import { kindOfWidget, LibraryButton } from "../../../media/picker/LibraryButton";
import { maxLengthOf } from "../validate";
import { orNull, str, type WidgetProps } from "./props";

/** Counter: the live character count against the field's limit. */
export function Counter({ value, field }: { value: string; field: WidgetProps["field"] }) {
  const max = maxLengthOf(field);
  const n = Array.from(value).length;
  const over = max !== undefined && n > max;
  const under = field.rules.minLength !== undefined && n > 0 && n < field.rules.minLength;
  return (
    <Text size="xs" c={over || under ? "red.8" : "dimmed"} ta="right" aria-live="polite">
      {n}
      {max !== undefined ? ` / ${max}` : ""} characters
    </Text>
  );
}

export function TextWidget(p: WidgetProps) {
  const v = str(p.value);
  return (
    <Stack gap={2}>
      <TextInput
        id={p.id}
        label={p.label}
        description={p.description}
        withAsterisk={p.required}
        value={v}
        onChange={(e) => p.onChange(orNull(e.currentTarget.value))}
        error={p.error}
        readOnly={p.readOnly}
      />
      <Counter value={v} field={p.field} />
    </Stack>
  );
}

export function TextareaWidget(p: WidgetProps) {
  const v = str(p.value);
  return (
    <Stack gap={2}>
      <Textarea
        id={p.id}
        label={p.label}
        description={p.description}
        withAsterisk={p.required}
        value={v}
        autosize
        minRows={4}
        maxRows={16}
        onChange={(e) => p.onChange(orNull(e.currentTarget.value))}
        error={p.error}
        readOnly={p.readOnly}
      />
      <Counter value={v} field={p.field} />
    </Stack>
  );
}

export function NumberWidget(p: WidgetProps) {
  return (
    <NumberInput
      id={p.id}
      label={p.label}
      description={p.description}
      withAsterisk={p.required}
      value={typeof p.value === "number" ? p.value : ""}
      min={p.field.rules.min}
      max={p.field.rules.max}
      clampBehavior="none"
      // A number as typed; a text on the way to one ("-", "1.") changes nothing yet.
      onChange={(v) => (typeof v === "number" ? p.onChange(v) : v === "" ? p.onChange(null) : undefined)}
      error={p.error}
      readOnly={p.readOnly}
    />
  );
}

export function BooleanWidget(p: WidgetProps) {
  return (
    <Switch
      id={p.id}
      label={p.label}
      description={p.description}
      checked={p.value === true}
      onChange={(e) => p.onChange(e.currentTarget.checked)}
      error={p.error}
      disabled={p.readOnly}
    />
  );
}

export function ColorWidget(p: WidgetProps) {
  return (
    <ColorInput
      id={p.id}
      label={p.label}
      description={p.description}
      withAsterisk={p.required}
      format="hex"
      value={str(p.value)}
      onChange={(v) => p.onChange(orNull(v))}
      error={p.error}
      readOnly={p.readOnly}
      disallowInput={false}
      withPicker={!p.readOnly}
      withEyeDropper={false}
    />
  );
}

const youtubeId = (s: string): string | undefined => {
  const m = /(?:youtu\.be\/|[?&]v=|\/embed\/|\/shorts\/)([A-Za-z0-9_-]{6,})/.exec(s);
  return m?.[1];
};

/** UrlWidget: an address, with a preview for images, videos, audio and YouTube, and media chosen from the library. */
export function UrlWidget(p: WidgetProps & { widget: string }) {
  const v = str(p.value);
  const types = p.field.rules.mediaTypes;
  const ok = !p.error && /^https?:\/\/\S+$/.test(v);
  const name = fieldType(p.field.type)?.name ?? "Address";
  const kind = kindOfWidget(p.widget);
  const library =
    kind && !p.readOnly
      ? (input: React.ReactNode) => (
          <Group gap="xs" wrap="nowrap" align="start">
            <Box style={{ flex: 1 }}>{input}</Box>
            <LibraryButton app={p.appId} kind={kind} label={p.label} onPick={(url) => p.onChange(url)} />
          </Group>
        )
      : undefined;
  return (
    <Stack gap={4}>
      <TextInput
        id={p.id}
        type="url"
        label={p.label}
        description={p.description ?? (types?.length ? `${name}: ${types.join(", ")}` : undefined)}
        withAsterisk={p.required}
        placeholder="https://…"
        value={v}
        onChange={(e) => p.onChange(orNull(e.currentTarget.value.trim()))}
        error={p.error}
        readOnly={p.readOnly}
        inputContainer={library}
      />
      {ok && <Preview widget={p.widget} url={v} label={p.label} />}
      {!p.error && p.widget === "youtube" && youtubeId(v) && (
        <Image
          src={`https://img.youtube.com/vi/${youtubeId(v)}/mqdefault.jpg`}
          alt={`YouTube video of ${p.label}`}
          w={240}
          radius="sm"
        />
      )}
    </Stack>
  );
}

function Preview({ widget, url, label }: { widget: string; url: string; label: string }) {
  switch (widget) {
    case "image":
      return <Image src={smallPreview(url)} alt={`Preview of ${label}`} mah={180} w="auto" fit="contain" radius="sm" fallbackSrc="" />;
    case "video":
      return (
        <Box component="video" src={url} controls preload="metadata" aria-label={`Preview of ${label}`} mah={200} maw="100%" />
      );
    case "audio":
      return <Box component="audio" src={url} controls preload="metadata" aria-label={`Preview of ${label}`} w="100%" />;
    default:
      return (
        <Group gap={4}>
          <Anchor href={url} target="_blank" rel="noopener noreferrer" size="sm">
            {widget === "document" ? "Open the document" : widget === "youtube" ? "Open on YouTube" : "Open the page"}
          </Anchor>
        </Group>
      );
  }
}
