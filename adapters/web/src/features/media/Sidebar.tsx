// The library's side panel: the app's folders as a tree (every level,
// with how many files are directly in it) and its tags as chips to filter
// by, both from GET /api/media/facets.
import { Anchor, Breadcrumbs, Button, Chip, Group, NavLink, Popover, Stack, Text, TextInput } from "@mantine/core";
import { IconFolder, IconFolderPlus, IconFolders } from "@tabler/icons-react";
import { useState, type FormEvent } from "react";

interface Folder {
  path: string;
  count: number;
}

/** folderTree orders folders as a tree (parents before children), with each one's depth. */
export function folderTree(folders: Folder[]): (Folder & { depth: number; name: string })[] {
  return folders
    .filter((f) => f.path !== "")
    .sort((a, b) => a.path.localeCompare(b.path))
    .map((f) => {
      const parts = f.path.split("/");
      return { ...f, depth: parts.length - 1, name: parts[parts.length - 1] };
    });
}

/** FolderTree: "All files", the top level, then each folder; the current one is marked. */
export function FolderTree(props: { folders: Folder[]; current: string | null; onChange: (folder: string | null) => void }) {
  const top = props.folders.find((f) => f.path === "")?.count;
  const item = (label: string, folder: string | null, count: number | undefined, depth: number, all = false) => (
    <NavLink
      key={folder ?? "\u0000all"}
      component="button"
      type="button"
      label={label}
      active={props.current === folder}
      aria-current={props.current === folder ? "true" : undefined}
      onClick={() => props.onChange(folder)}
      leftSection={all ? <IconFolders size={16} aria-hidden /> : <IconFolder size={16} aria-hidden />}
      rightSection={
        count !== undefined ? (
          <Text size="xs" c="dimmed" aria-label={`${count} file${count === 1 ? "" : "s"}`}>
            {count}
          </Text>
        ) : undefined
      }
      pl={8 + depth * 14}
      py={4}
    />
  );
  return (
    <nav aria-label="Folders">
      <Text size="xs" fw={700} c="dimmed" tt="uppercase" px={8} mb={4}>
        Folders
      </Text>
      {item("All files", null, undefined, 0, true)}
      {item("Top level", "", top, 0)}
      {folderTree(props.folders).map((f) => item(f.name, f.path, f.count, f.depth + 1))}
      {props.current && !props.folders.some((f) => f.path === props.current) && item(props.current, props.current, 0, 1)}
    </nav>
  );
}

const segmentRE = /^[^/\\]+$/;

/**
 * NewFolder: a folder exists while files are in it, so "creating" one
 * opens it, empty, for the uploads that follow (inside the current one).
 */
export function NewFolder({ current, onCreate }: { current: string | null; onCreate: (path: string) => void }) {
  const [opened, setOpened] = useState(false);
  const [name, setName] = useState("");
  const [error, setError] = useState<string>();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const n = name.trim();
    if (!segmentRE.test(n)) return setError("A name without “/”");
    onCreate(current ? `${current}/${n}` : n);
    setOpened(false);
    setName("");
    setError(undefined);
  };
  return (
    <Popover opened={opened} onChange={setOpened} position="bottom-start" trapFocus withArrow>
      <Popover.Target>
        <Button variant="subtle" size="xs" leftSection={<IconFolderPlus size={16} aria-hidden />} onClick={() => setOpened((o) => !o)} justify="start">
          New folder…
        </Button>
      </Popover.Target>
      <Popover.Dropdown>
        <form onSubmit={submit} noValidate>
          <Stack gap="xs">
            <TextInput
              label="Folder name"
              description={current ? `Inside “${current}”` : "At the top level"}
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              error={error}
              data-autofocus
            />
            <Button type="submit" size="xs">
              Open the new folder
            </Button>
          </Stack>
        </form>
      </Popover.Dropdown>
    </Popover>
  );
}

/** FolderPath: the current folder as a breadcrumb, each level a way back up. */
export function FolderPath({ folder, onChange }: { folder: string | null; onChange: (folder: string | null) => void }) {
  const parts = folder ? folder.split("/") : [];
  const crumbs = [
    { label: "All files", to: null as string | null },
    ...(folder === "" ? [{ label: "Top level", to: "" }] : []),
    ...parts.map((p, i) => ({ label: p, to: parts.slice(0, i + 1).join("/") })),
  ];
  return (
    <Breadcrumbs aria-label="Folder path" separatorMargin={4}>
      {crumbs.map((c, i) =>
        i === crumbs.length - 1 ? (
          <Text key={i} size="sm" aria-current="location">
            {c.label}
          </Text>
        ) : (
          <Anchor key={i} component="button" type="button" size="sm" onClick={() => onChange(c.to)}>
            {c.label}
          </Anchor>
        ),
      )}
    </Breadcrumbs>
  );
}

/** TagChips: the app's tags; the chosen ones filter the library (a file must hold them all). */
export function TagChips(props: { tags: { name: string; count: number }[]; chosen: string[]; onChange: (tags: string[]) => void }) {
  if (props.tags.length === 0) return null;
  return (
    <Stack gap={4} role="group" aria-labelledby="media-tags-label">
      <Text id="media-tags-label" size="xs" fw={700} c="dimmed" tt="uppercase" px={8}>
        Tags
      </Text>
      <Chip.Group multiple value={props.chosen} onChange={props.onChange}>
        <Group gap={6} px={8}>
          {props.tags.map((t) => (
            <Chip key={t.name} value={t.name} size="xs">
              {t.name} ({t.count})
            </Chip>
          ))}
        </Group>
      </Chip.Group>
    </Stack>
  );
}
