// ReplaceFile: new bytes for a file, of the same kind (the API refuses
// another kind with 415). The file keeps its id and address, which serves
// the new version; a progress bar shows the upload.
import { Alert, Button, FileButton, Progress, Stack } from "@mantine/core";
import { IconReplace } from "@tabler/icons-react";
import { useState } from "react";
import { describe } from "../../../lib/errors";
import { useMediaChanged, type MediaFile } from "../api";
import { replaceMedia } from "../upload";

const accept: Record<string, string | undefined> = { image: "image/*", video: "video/*", audio: "audio/*" };

export function ReplaceFile({ file }: { file: MediaFile }) {
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<string>();
  const changed = useMediaChanged(file.app);

  function replace(f: File | null) {
    if (!f) return;
    setError(undefined);
    setProgress(0);
    replaceMedia(file.id, f, setProgress)
      .then((m) => changed(m))
      .catch((e: unknown) => setError(describe(e)))
      .finally(() => setProgress(null));
  }

  return (
    <Stack gap={6}>
      <FileButton onChange={replace} accept={accept[file.kind]}>
        {(props) => (
          <Button {...props} variant="default" leftSection={<IconReplace size={16} aria-hidden />} loading={progress !== null}>
            Replace…
          </Button>
        )}
      </FileButton>
      {progress !== null && <Progress value={Math.round(progress * 100)} aria-label={`Replacing ${file.name}`} />}
      {error && (
        <Alert role="alert" color="red" title="Not replaced" withCloseButton closeButtonLabel="Dismiss" onClose={() => setError(undefined)}>
          {error}
        </Alert>
      )}
    </Stack>
  );
}
