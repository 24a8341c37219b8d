// MediaDetail: one file in a drawer, opened from the library (its id is
// in the address as ?file=): preview, facts, the details form, where it
// is used, a transform preview for images, Replace and Delete. Actions
// the user's rights do not allow are not offered.
import { Alert, Anchor, Divider, Drawer, Group, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";
import { describe } from "../../../lib/errors";
import { useRights } from "../../access/hooks";
import { can } from "../../access/rights";
import { PageLoader } from "../../shell/PageLoader";
import { useMediaFile, type MediaFile } from "../api";
import { absolute, formatDate, formatSize, kindLabel } from "../format";
import { DeleteFile } from "./DeleteFile";
import { MetadataForm } from "./MetadataForm";
import { DownloadLink, Preview } from "./Preview";
import { ReplaceFile } from "./ReplaceFile";
import { TransformPreview } from "./TransformPreview";
import { UsedIn } from "./UsedIn";

interface Props {
  app: string;
  id: string | null;
  folders: { path: string }[];
  tags: { name: string }[];
  onClose: () => void;
}

export function MediaDetail(props: Props) {
  const file = useMediaFile(props.id);
  return (
    <Drawer
      opened={!!props.id}
      onClose={props.onClose}
      position="right"
      size="xl"
      title={file.data?.name ?? "File"}
      closeButtonProps={{ "aria-label": "Close the file's details" }}
    >
      {file.isPending ? (
        <PageLoader label="Loading the file" />
      ) : file.isError ? (
        <Alert color="red" title="The file cannot be shown">
          {describe(file.error)}
        </Alert>
      ) : (
        <Detail key={file.data.id} file={file.data} {...props} />
      )}
    </Drawer>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Stack gap="xs" component="section" aria-label={title}>
      <Title order={3} size="h5">
        {title}
      </Title>
      {children}
    </Stack>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm">{children}</Text>
    </div>
  );
}

function Detail({ file, app, folders, tags, onClose }: Props & { file: MediaFile }) {
  const rights = useRights();
  const mayUpdate = can(rights, "update", { app });
  const mayDelete = can(rights, "delete", { app });
  return (
    <Stack gap="lg">
      <Stack gap="xs">
        <Preview file={file} />
        <Group justify="space-between">
          <DownloadLink file={file} />
          <Anchor href={absolute(file.url)} target="_blank" rel="noopener noreferrer" size="xs" c="dimmed">
            {absolute(file.url)}
          </Anchor>
        </Group>
      </Stack>
      <SimpleGrid cols={{ base: 2, sm: 3 }} spacing="xs">
        <Fact label="Kind">{kindLabel(file.kind)}</Fact>
        <Fact label="Type">{file.mime || "Unknown (kept elsewhere)"}</Fact>
        <Fact label="Size">{formatSize(file.size)}</Fact>
        {file.width ? <Fact label="Dimensions">{`${file.width} × ${file.height} px`}</Fact> : null}
        {file.durationMs ? <Fact label="Duration">{`${(file.durationMs / 1000).toFixed(1)} s`}</Fact> : null}
        <Fact label="Version">{file.version}</Fact>
        <Fact label="Uploaded at">{formatDate(file.uploadedAt)}</Fact>
        {file.updatedAt ? <Fact label="Changed at">{formatDate(file.updatedAt)}</Fact> : null}
      </SimpleGrid>
      <Section title="Used in">
        <UsedIn app={app} uses={file.usedIn ?? []} />
      </Section>
      <Divider />
      <Section title="Details">
        <MetadataForm file={file} folders={folders.map((f) => f.path).filter(Boolean)} tags={tags.map((t) => t.name)} readOnly={!mayUpdate} />
      </Section>
      {file.kind === "image" && !file.external && (
        <>
          <Divider />
          <Section title="Transform preview">
            <TransformPreview file={file} />
          </Section>
        </>
      )}
      {(mayUpdate || mayDelete) && (
        <>
          <Divider />
          <Group align="start">
            {mayUpdate && !file.external && <ReplaceFile file={file} />}
            {mayDelete && <DeleteFile file={file} onDeleted={onClose} />}
          </Group>
        </>
      )}
    </Stack>
  );
}
