// A file's preview in its details: an image through a derived (smaller)
// image, a player for video and audio, a PDF in a frame, and for anything
// else a link to download it.
import { Anchor, Box, Center, Group, Image, Paper, Text } from "@mantine/core";
import { IconDownload } from "@tabler/icons-react";
import type { MediaFile } from "../api";
import { KindIcon, transformed } from "../format";

export function Preview({ file }: { file: MediaFile }) {
  const label = `Preview of ${file.name}`;
  switch (file.kind) {
    case "image":
      return (
        <Paper withBorder p={4} bg="gray.0">
          <Image
            src={file.external ? file.url : transformed(file.url, { w: 800 })}
            alt={file.alt?.en ?? Object.values(file.alt ?? {})[0] ?? label}
            mah={320}
            fit="contain"
            radius="sm"
          />
        </Paper>
      );
    case "video":
      return <Box component="video" src={file.url} controls preload="metadata" aria-label={label} w="100%" mah={320} bg="dark.9" />;
    case "audio":
      return <Box component="audio" src={file.url} controls preload="metadata" aria-label={label} w="100%" />;
    default:
      if (file.mime === "application/pdf") {
        return (
          <Box component="iframe" src={file.url} title={label} w="100%" h={360} style={{ border: "1px solid var(--mantine-color-gray-3)", borderRadius: 4 }} />
        );
      }
      return (
        <Paper withBorder p="md">
          <Center>
            <Group gap="sm">
              <KindIcon kind={file.kind} size={40} />
              <Text size="sm">{file.mime || "A file kept elsewhere"}</Text>
            </Group>
          </Center>
        </Paper>
      );
  }
}

/** DownloadLink: the file itself, to open or save. */
export function DownloadLink({ file }: { file: MediaFile }) {
  return (
    <Anchor href={file.url} target="_blank" rel="noopener noreferrer" download={file.external ? undefined : file.name} size="sm">
      <Group gap={4} component="span" wrap="nowrap">
        <IconDownload size={16} aria-hidden />
        Download or open the file
      </Group>
    </Anchor>
  );
}
