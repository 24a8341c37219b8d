// The library's two views of one page of files: cards (a thumbnail or
// the kind's icon, name, size, uses) and a table. A file's name opens its
// details; in the picker each card has "Use" instead.
import { Anchor, Box, Button, Card, Stack, Table, Text, UnstyledButton, VisuallyHidden } from "@mantine/core";
import type { MediaFile } from "./api";
import { formatDate, formatSize, kindLabel, Thumb } from "./format";

interface ViewProps {
  files: MediaFile[];
  /** Opens a file's details. */
  onOpen?: (f: MediaFile) => void;
  /** The picker: chooses a file. */
  onUse?: (f: MediaFile) => void;
}

const usesText = (n: number) => (n === 0 ? "Not used" : `Used ${n} time${n === 1 ? "" : "s"}`);

/** MediaGrid shows files as cards. */
export function MediaGrid({ files, onOpen, onUse }: ViewProps) {
  return (
    <Box role="list" aria-label="Files" style={{ display: "grid", gap: "var(--mantine-spacing-sm)", gridTemplateColumns: `repeat(auto-fill, minmax(${onUse ? 150 : 170}px, 1fr))` }}>
      {files.map((f) => (
        <Card key={f.id} withBorder padding="xs" radius="md" role="listitem">
          <Card.Section>
            <UnstyledButton
              onClick={() => (onOpen ? onOpen(f) : onUse?.(f))}
              w="100%"
              tabIndex={-1}
              aria-hidden
              style={{ display: "block", aspectRatio: "1 / 1", overflow: "hidden" }}
            >
              <Thumb file={f} size="100%" radius="xs" />
            </UnstyledButton>
          </Card.Section>
          <Stack gap={2} mt="xs">
            {onOpen ? (
              <Anchor component="button" type="button" size="sm" fw={500} ta="left" onClick={() => onOpen(f)} truncate="end" title={f.name}>
                {f.name}
              </Anchor>
            ) : (
              <Text size="sm" fw={500} truncate="end" title={f.name}>
                {f.name}
              </Text>
            )}
            <Text size="xs" c="dimmed">
              {kindLabel(f.kind)} · {formatSize(f.size)}
            </Text>
            <Text size="xs" c={f.uses ? "indigo.8" : "dimmed"}>
              {usesText(f.uses)}
            </Text>
            {onUse && (
              <Button size="xs" mt={4} onClick={() => onUse(f)} aria-label={`Use ${f.name}`}>
                Use
              </Button>
            )}
          </Stack>
        </Card>
      ))}
    </Box>
  );
}

/** MediaTable shows files as rows. */
export function MediaTable({ files, onOpen, onUse }: ViewProps) {
  return (
    <Table.ScrollContainer minWidth={640}>
      <Table highlightOnHover verticalSpacing={4} aria-label="Files">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col" w={56}>
              <VisuallyHidden>Preview</VisuallyHidden>
            </Table.Th>
            <Table.Th scope="col">Name</Table.Th>
            <Table.Th scope="col">Kind</Table.Th>
            <Table.Th scope="col" ta="right">
              Size
            </Table.Th>
            <Table.Th scope="col" ta="right">
              Uses
            </Table.Th>
            <Table.Th scope="col">Uploaded at</Table.Th>
            {onUse && (
              <Table.Th scope="col">
                <VisuallyHidden>Action</VisuallyHidden>
              </Table.Th>
            )}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {files.map((f) => (
            <Table.Tr key={f.id}>
              <Table.Td>
                <Thumb file={f} size={40} />
              </Table.Td>
              <Table.Td>
                {onOpen ? (
                  <Anchor component="button" type="button" size="sm" ta="left" onClick={() => onOpen(f)}>
                    {f.name}
                  </Anchor>
                ) : (
                  <Text size="sm">{f.name}</Text>
                )}
                {f.folder && (
                  <Text size="xs" c="dimmed">
                    {f.folder}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>{kindLabel(f.kind)}</Table.Td>
              <Table.Td ta="right">{formatSize(f.size)}</Table.Td>
              <Table.Td ta="right">{f.uses}</Table.Td>
              <Table.Td>{formatDate(f.uploadedAt)}</Table.Td>
              {onUse && (
                <Table.Td>
                  <Button size="xs" onClick={() => onUse(f)} aria-label={`Use ${f.name}`}>
                    Use
                  </Button>
                </Table.Td>
              )}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
