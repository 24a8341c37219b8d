// Uploader: drop files (or choose them with the button) to upload them
// into a folder of the app's library. Each file shows a progress bar
// while it goes up, then done, or the API's refusal (too large, a type
// not allowed, a truncated body) in its words. The library and the media
// picker share it.
import "@mantine/dropzone/styles.css";
import { ActionIcon, Alert, Button, Group, Progress, Stack, Text } from "@mantine/core";
import { Dropzone, type FileRejection } from "@mantine/dropzone";
import { IconCheck, IconUpload, IconX } from "@tabler/icons-react";
import { useRef, useState } from "react";
import { describe } from "../../lib/errors";
import type { MediaFile, MediaKind } from "./api";
import { useMediaChanged } from "./api";
import { formatSize } from "./format";
import { uploadMedia } from "./upload";

interface Upload {
  key: number;
  name: string;
  size: number;
  progress: number;
  state: "sending" | "done" | "failed";
  error?: string;
}

/** What the picker's kinds accept in the file chooser (the server sniffs the bytes anyway). */
const accepts: Partial<Record<MediaKind, string[]>> = { image: ["image/*"], video: ["video/*"], audio: ["audio/*"] };

let seq = 0;

export function Uploader(props: {
  app: string;
  /** The folder uploads go into ("" is the top level). */
  folder: string;
  /** Only files of this kind (the picker). */
  kind?: MediaKind;
  onUploaded?: (f: MediaFile) => void;
  compact?: boolean;
}) {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const openRef = useRef<() => void>(null);
  const changed = useMediaChanged(props.app);
  const where = props.folder ? `the folder “${props.folder}”` : "the top level";

  const patch = (key: number, p: Partial<Upload>) => setUploads((list) => list.map((u) => (u.key === key ? { ...u, ...p } : u)));

  function start(files: File[]) {
    const added = files.map((f) => ({ key: ++seq, name: f.name, size: f.size, progress: 0, state: "sending" as const }));
    setUploads((list) => [...added, ...list.filter((u) => u.state !== "done")]);
    files.forEach((f, i) => {
      const key = added[i].key;
      uploadMedia(f, { app: props.app, folder: props.folder }, (p) => patch(key, { progress: p }))
        .then((m) => {
          patch(key, { state: "done", progress: 1 });
          changed(m);
          props.onUploaded?.(m);
        })
        .catch((err: unknown) => patch(key, { state: "failed", error: describe(err) }));
    });
  }

  function rejected(list: FileRejection[]) {
    setUploads((prev) => [
      ...list.map((r) => ({ key: ++seq, name: r.file.name, size: r.file.size, progress: 0, state: "failed" as const, error: r.errors.map((e) => e.message).join("; ") })),
      ...prev,
    ]);
  }

  return (
    <Stack gap="xs">
      <Dropzone
        onDrop={start}
        onReject={rejected}
        accept={props.kind ? accepts[props.kind] : undefined}
        openRef={openRef}
        activateOnClick={false}
        activateOnKeyboard={false}
        role="group"
        p={props.compact ? "sm" : "md"}
        aria-label={`Drop files here to upload them into ${where}`}
        inputProps={{ "aria-label": "Files to upload" }}
      >
        <Group justify="center" gap="sm" style={{ pointerEvents: "none" }}>
          <IconUpload size={props.compact ? 20 : 28} stroke={1.5} aria-hidden />
          <Text size="sm">
            Drop files here to upload them into {where}, or{" "}
          </Text>
          <Button size="xs" leftSection={<IconUpload size={14} aria-hidden />} onClick={() => openRef.current?.()} style={{ pointerEvents: "all" }}>
            Upload
          </Button>
        </Group>
      </Dropzone>
      {uploads.length > 0 && (
        <Stack gap={6} aria-label="Uploads" role="list">
          {uploads.map((u) => (
            <UploadRow key={u.key} upload={u} onDismiss={() => setUploads((l) => l.filter((x) => x.key !== u.key))} />
          ))}
        </Stack>
      )}
    </Stack>
  );
}

function UploadRow({ upload: u, onDismiss }: { upload: Upload; onDismiss: () => void }) {
  const pct = Math.round(u.progress * 100);
  if (u.state === "failed") {
    return (
      <div role="listitem">
        <Alert role="alert" color="red" variant="light" p="xs" title={`${u.name} was not uploaded`} withCloseButton closeButtonLabel={`Dismiss ${u.name}`} onClose={onDismiss}>
          {u.error}
        </Alert>
      </div>
    );
  }
  return (
    <Group role="listitem" gap="sm" wrap="nowrap">
      <Text size="sm" truncate="end" w={220} title={u.name}>
        {u.name}
      </Text>
      <Text size="xs" c="dimmed" w={70}>
        {formatSize(u.size)}
      </Text>
      <Progress value={pct} aria-label={`Uploading ${u.name}`} style={{ flex: 1 }} color={u.state === "done" ? "green" : undefined} />
      {u.state === "done" ? (
        <Group gap={4} wrap="nowrap">
          <IconCheck size={16} color="var(--mantine-color-green-8)" aria-hidden />
          <Text size="xs">Uploaded</Text>
        </Group>
      ) : (
        <Text size="xs" w={40} ta="right">
          {pct}%
        </Text>
      )}
      {u.state === "done" && (
        <ActionIcon variant="subtle" size="sm" aria-label={`Dismiss ${u.name}`} onClick={onDismiss}>
          <IconX size={14} aria-hidden />
        </ActionIcon>
      )}
    </Group>
  );
}
