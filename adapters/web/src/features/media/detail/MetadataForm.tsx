// MetadataForm: a file's name, folder, tags, and its alt text and caption
// per locale. Saving sends the whole set of locales (the API replaces
// them); a field the API refuses shows its message at that field. Without
// `update` on the app the form is read-only and has no Save.
import { Alert, Autocomplete, Button, Group, Stack, TagsInput, TextInput } from "@mantine/core";
import { notifications } from "@mantine/notifications";
import { useState, type FormEvent } from "react";
import { ApiError, describe } from "../../../lib/errors";
import { useUpdateMedia, type MediaFile } from "../api";
import { LocaleTexts, type Texts } from "./LocaleTexts";

interface Draft {
  name: string;
  folder: string;
  tags: string[];
  texts: Texts;
}

const draftOf = (f: MediaFile): Draft => {
  const locales = Array.from(new Set([...Object.keys(f.alt ?? {}), ...Object.keys(f.caption ?? {})])).sort();
  return {
    name: f.name,
    folder: f.folder,
    tags: f.tags,
    texts: locales.map((l) => ({ locale: l, alt: f.alt?.[l] ?? "", caption: f.caption?.[l] ?? "" })),
  };
};

const same = (a: Draft, b: Draft) => JSON.stringify(a) === JSON.stringify(b);

export function MetadataForm(props: { file: MediaFile; folders: string[]; tags: string[]; readOnly: boolean }) {
  const { file } = props;
  const [draft, setDraft] = useState<Draft>(() => draftOf(file));
  const update = useUpdateMedia(file.app, file.id);
  const err = update.error instanceof ApiError ? update.error : undefined;
  const at = (field: string) => (err?.field === field ? err.message : undefined);
  const dirty = !same(draft, draftOf(file));
  const set = (p: Partial<Draft>) => setDraft((d) => ({ ...d, ...p }));

  function submit(e: FormEvent) {
    e.preventDefault();
    const texts = draft.texts.filter((t) => t.locale.trim());
    const pick = (k: "alt" | "caption") => Object.fromEntries(texts.filter((t) => t[k].trim()).map((t) => [t.locale.trim(), t[k].trim()]));
    update.mutate(
      { name: draft.name.trim(), folder: draft.folder.trim().replace(/^\/+|\/+$/g, ""), tags: draft.tags, alt: pick("alt"), caption: pick("caption") },
      {
        onSuccess: (f) => {
          setDraft(draftOf(f));
          notifications.show({ color: "green", title: "Saved", message: `The details of “${f.name}” are saved.` });
        },
      },
    );
  }

  return (
    <form onSubmit={submit} noValidate aria-label="Details of the file">
      <Stack gap="sm">
        <TextInput label="Name" value={draft.name} onChange={(e) => set({ name: e.currentTarget.value })} readOnly={props.readOnly} error={at("name")} withAsterisk={!props.readOnly} />
        <Autocomplete
          label="Folder"
          description="Levels separated by “/”; empty for the top level"
          data={props.folders}
          value={draft.folder}
          onChange={(folder) => set({ folder })}
          readOnly={props.readOnly}
          error={at("folder")}
        />
        <TagsInput
          label="Tags"
          data={props.tags}
          value={draft.tags}
          onChange={(tags) => set({ tags })}
          readOnly={props.readOnly}
          error={at("tags")}
          clearable={!props.readOnly}
        />
        <LocaleTexts value={draft.texts} onChange={(texts) => set({ texts })} readOnly={props.readOnly} error={at("alt") ?? at("caption")} />
        {update.isError && !err?.field && (
          <Alert color="red" title="Not saved">
            {describe(update.error)}
          </Alert>
        )}
        {!props.readOnly && (
          <Group justify="flex-end">
            <Button variant="default" disabled={!dirty || update.isPending} onClick={() => (setDraft(draftOf(file)), update.reset())}>
              Undo changes
            </Button>
            <Button type="submit" loading={update.isPending} disabled={!dirty || !draft.name.trim()}>
              Save details
            </Button>
          </Group>
        )}
      </Stack>
    </form>
  );
}
