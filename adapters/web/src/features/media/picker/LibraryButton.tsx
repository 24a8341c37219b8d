// LibraryButton: "Choose from library" next to a media field's address.
// The picker (and the uploader it holds) loads when first opened, so the
// item editor does not carry it. Shown to those who may read the app.
import { Button } from "@mantine/core";
import { IconPhotoSearch } from "@tabler/icons-react";
import { lazy, Suspense, useState } from "react";
import { useCan } from "../../access/hooks";
import { absolute } from "../format";
import type { MediaKind } from "../api";

const MediaPicker = lazy(() => import("./MediaPicker"));

/** kindOfWidget: the library's kind a URL field's widget holds, if any. */
export function kindOfWidget(widget: string): MediaKind | undefined {
  return widget === "image" || widget === "video" || widget === "audio" || widget === "document" ? widget : undefined;
}

export function LibraryButton(props: { app: string; kind: MediaKind; label: string; onPick: (url: string) => void }) {
  const [opened, setOpened] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const mayRead = useCan("read", { app: props.app });
  if (!mayRead) return null;
  return (
    <>
      <Button
        variant="default"
        leftSection={<IconPhotoSearch size={16} aria-hidden />}
        onClick={() => {
          setLoaded(true);
          setOpened(true);
        }}
        aria-label={`Choose from library: ${props.label}`}
      >
        Choose from library
      </Button>
      {loaded && (
        <Suspense fallback={null}>
          <MediaPicker
            app={props.app}
            kind={props.kind}
            label={props.label}
            opened={opened}
            onClose={() => setOpened(false)}
            onPick={(f) => props.onPick(absolute(f.url))}
          />
        </Suspense>
      )}
    </>
  );
}
