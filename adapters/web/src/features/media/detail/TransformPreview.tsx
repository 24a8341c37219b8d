// TransformPreview: choose a width, a height, how the image fits them
// and a format, and see the image the server derives, with its address
// to copy. The API signs the address (the file server makes presets and
// one side of its list of sizes for anyone, other transforms when signed).
import { ActionIcon, CopyButton, Group, Image, Paper, Select, Stack, Text, TextInput, Tooltip } from "@mantine/core";
import { IconCheck, IconCopy } from "@tabler/icons-react";
import { useState } from "react";
import { useTransformURL, type MediaFile } from "../api";
import { absolute, type Transform } from "../format";

/** Widths and heights the server derives without a signature. */
export const sizes = [200, 400, 800, 1600];
const fits = [
  { value: "cover", label: "Cover (crop to fill)" },
  { value: "contain", label: "Contain (fit inside)" },
  { value: "fill", label: "Fill (stretch)" },
  { value: "inside", label: "Inside (never enlarge)" },
];
const formats = [
  { value: "", label: "Same as the original" },
  { value: "webp", label: "WebP" },
  { value: "jpeg", label: "JPEG" },
  { value: "png", label: "PNG" },
  { value: "avif", label: "AVIF" },
];

export function TransformPreview({ file }: { file: MediaFile }) {
  const [t, setT] = useState<Transform>({ w: 400, fm: "webp" });
  const [state, setState] = useState<{ src: string; w: number; h: number } | { src: string; failed: true }>();
  const signed = useTransformURL(file.id, t);
  const src = signed.data ?? "";
  const full = src && absolute(src);
  const shown = state?.src === src ? state : undefined;
  const set = (p: Partial<Transform>) => setT((old) => ({ ...old, ...p }));

  return (
    <Stack gap="xs">
      <Group gap="xs" align="end" wrap="wrap">
        <Select
          label="Width"
          data={sizes.map((n) => ({ value: String(n), label: `${n} px` }))}
          value={t.w ? String(t.w) : null}
          onChange={(v) => set({ w: v ? Number(v) : undefined })}
          w={130}
          clearable
        />
        <Select
          label="Height"
          placeholder="Any"
          data={sizes.map((n) => ({ value: String(n), label: `${n} px` }))}
          value={t.h ? String(t.h) : null}
          onChange={(v) => set({ h: v ? Number(v) : undefined })}
          w={130}
          clearable
        />
        <Select label="Fit" placeholder="Default" data={fits} value={t.fit ?? null} onChange={(v) => set({ fit: v ?? undefined })} w={200} clearable />
        <Select label="Format" data={formats} value={t.fm ?? ""} onChange={(v) => set({ fm: v ?? "" })} w={180} allowDeselect={false} />
      </Group>
      <TextInput
        label="Address of the derived image"
        value={full}
        readOnly
        onFocus={(e) => e.currentTarget.select()}
        rightSection={
          <CopyButton value={full}>
            {({ copied, copy }) => (
              <Tooltip label={copied ? "Copied" : "Copy the address"} withArrow>
                <ActionIcon variant="subtle" onClick={copy} aria-label="Copy the address">
                  {copied ? <IconCheck size={16} aria-hidden /> : <IconCopy size={16} aria-hidden />}
                </ActionIcon>
              </Tooltip>
            )}
          </CopyButton>
        }
      />
      <Paper withBorder p={4} bg="gray.0" style={{ overflow: "auto", maxHeight: 420 }}>
        {src && <Image
          key={src}
          src={src}
          alt={`${file.name}, derived: ${describeTransform(t)}`}
          w="auto"
          maw="none"
          fit="none"
          data-testid="derived-image"
          onLoad={(e) => setState({ src, w: e.currentTarget.naturalWidth, h: e.currentTarget.naturalHeight })}
          onError={() => setState({ src, failed: true })}
        />}
      </Paper>
      <Text size="xs" c={shown && "failed" in shown ? "red.8" : "dimmed"} aria-live="polite">
        {signed.isError ? "The server refused this transform." : !shown ? "Deriving the image…" : "failed" in shown ? "The server did not derive this image." : `Derived image: ${shown.w} × ${shown.h} px`}
      </Text>
    </Stack>
  );
}

function describeTransform(t: Transform): string {
  const parts = [t.w && `${t.w} px wide`, t.h && `${t.h} px high`, t.fit, t.fm && t.fm.toUpperCase()].filter(Boolean);
  return parts.length ? parts.join(", ") : "as uploaded";
}
