// How the library shows a file: its kind in words and as an icon, its
// size, a thumbnail (images) and the addresses of derived images.
import { Center, Image, type MantineSize } from "@mantine/core";
import { IconFile, IconFileText, IconHeadphones, IconMovie, IconPhoto, type Icon } from "@tabler/icons-react";
import type { MediaFile, MediaKind } from "./api";

export const kinds: { value: MediaKind; label: string; plural: string }[] = [
  { value: "image", label: "Image", plural: "Images" },
  { value: "video", label: "Video", plural: "Videos" },
  { value: "audio", label: "Audio", plural: "Audio" },
  { value: "document", label: "Document", plural: "Documents" },
];

export const kindLabel = (k: MediaKind): string => kinds.find((x) => x.value === k)?.label ?? k;

const icons: Record<MediaKind, Icon> = { image: IconPhoto, video: IconMovie, audio: IconHeadphones, document: IconFileText };

/** KindIcon: the icon of a kind of file (decorative: the kind is said in words nearby). */
export function KindIcon({ kind, size = 32 }: { kind: MediaKind; size?: number }) {
  const I = icons[kind] ?? IconFile;
  return <I size={size} stroke={1.4} aria-hidden />;
}

/** formatSize: bytes in KB, MB or GB (1024-based, as file managers do). */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let n = bytes / 1024;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n < 10 ? n.toFixed(1) : Math.round(n)} ${units[i]}`;
}

export const formatDate = (ms: number): string => new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });

/** absolute: a URL as content fields hold it (absolute http(s), same origin when the API answers a path). */
export const absolute = (url: string): string => new URL(url, window.location.origin).href;

/** Transform: the query parameters of a derived image. */
export interface Transform {
  w?: number;
  h?: number;
  fit?: string;
  fm?: string;
}

/** transformed: the address of file's image derived by t. */
export function transformed(url: string, t: Transform): string {
  const u = new URL(url, window.location.origin);
  for (const [k, v] of Object.entries(t)) if (v !== undefined && v !== "") u.searchParams.set(k, String(v));
  return u.origin === window.location.origin ? u.pathname + u.search : u.href;
}

/**
 * smallPreview: for an image of this server's library (an address without
 * a query, which a signed one has), its "small" preset (400 px wide);
 * any other address as it is.
 */
export function smallPreview(url: string): string {
  try {
    const u = new URL(url, window.location.origin);
    if (u.origin !== window.location.origin || !u.pathname.startsWith("/media/") || u.search) return url;
    return `${u.pathname}?preset=small`;
  } catch {
    return url;
  }
}

/** Thumb: a file's thumbnail (images) or its kind's icon, in a square box. */
export function Thumb({ file, size, radius = "sm" }: { file: MediaFile; size: number | string; radius?: MantineSize }) {
  if (file.kind === "image" && (file.thumbnailUrl || !file.external)) {
    return (
      <Image
        src={file.thumbnailUrl ?? transformed(file.url, { w: 200 })}
        alt=""
        w={size}
        h={size}
        fit="cover"
        radius={radius}
        loading="lazy"
        bg="gray.1"
      />
    );
  }
  return (
    <Center w={size} h={size} bg="gray.1" c="gray.7" style={{ borderRadius: `var(--mantine-radius-${radius})` }}>
      <KindIcon kind={file.kind} size={typeof size === "number" ? Math.max(20, Math.round(size / 3)) : 48} />
    </Center>
  );
}
