// The app's media library: folders and tags at the side, a toolbar
// (search, kind, sort, grid or list), uploads by drag and drop or the
// button into the current folder, one page of files, and a file's
// details in a drawer. The whole view is in the address. Reading needs
// `read` on the app, uploading `write`; the API checks both again.
import { Alert, Button, Grid, Group, Paper, Select, Stack, Text, Title } from "@mantine/core";
import { useParams } from "react-router";
import { describe } from "../../lib/errors";
import { useRights } from "../access/hooks";
import { can, whyNot } from "../access/rights";
import { Warning } from "../modules/components/ModuleDialogs";
import { PageLoader } from "../shell/PageLoader";
import { PageNav } from "../shell/PageNav";
import { useMediaFacets, useMediaList } from "./api";
import { MediaDetail } from "./detail/MediaDetail";
import { MediaGrid, MediaTable } from "./MediaGrid";
import { pageSizes, useLibraryParams } from "./params";
import { FolderPath, FolderTree, NewFolder, TagChips } from "./Sidebar";
import { Toolbar, ViewSwitch } from "./Toolbar";
import { Uploader } from "./Uploader";

export function MediaPage() {
  const { appId = "" } = useParams();
  const rights = useRights();
  const allowed = can(rights, "read", { app: appId });
  return (
    <Stack>
      <div>
        <Title order={1} size="h2">
          Media
        </Title>
        <Text c="dimmed" size="sm">
          The app's images, videos, audio and documents, for content fields and pushes.
        </Text>
      </div>
      {!rights ? (
        <PageLoader />
      ) : !allowed ? (
        <Warning title="Not available">{whyNot("read", { app: appId })}</Warning>
      ) : (
        <Library app={appId} />
      )}
    </Stack>
  );
}

function Library({ app }: { app: string }) {
  const rights = useRights();
  const [params, update] = useLibraryParams();
  const list = useMediaList(app, params);
  const facets = useMediaFacets(app);
  const mayWrite = can(rights, "write", { app });
  const total = list.data?.pagination.totalItems ?? 0;
  const pages = Math.max(1, list.data?.pagination.totalPages ?? 1);
  const filtered = params.q !== "" || params.kind !== null || params.tags.length > 0 || params.folder !== null || params.uploadedBy !== "";
  const open = (id: string | null) => update({ file: id });

  return (
    <>
    <Grid gap="md">
      <Grid.Col span={{ base: 12, md: 3, lg: 2 }}>
        <Stack gap="md">
          <Stack gap={4}>
            <FolderTree folders={facets.data?.folders ?? []} current={params.folder} onChange={(folder) => update({ folder })} />
            {mayWrite && <NewFolder current={params.folder} onCreate={(folder) => update({ folder })} />}
          </Stack>
          <TagChips tags={facets.data?.tags ?? []} chosen={params.tags} onChange={(tags) => update({ tags })} />
          {facets.isError && (
            <Text size="xs" c="red.8">
              Folders and tags: {describe(facets.error)}
            </Text>
          )}
        </Stack>
      </Grid.Col>
      <Grid.Col span={{ base: 12, md: 9, lg: 10 }}>
        <Stack gap="sm">
          <Group justify="space-between" wrap="wrap">
            <FolderPath folder={params.folder} onChange={(folder) => update({ folder })} />
            <Group gap="sm">
              <Text size="sm" c="dimmed" aria-live="polite">
                {list.data ? `${total.toLocaleString()} file${total === 1 ? "" : "s"}${filtered ? " shown" : ""}` : ""}
              </Text>
              <ViewSwitch params={params} update={update} />
            </Group>
          </Group>
          <Toolbar params={params} update={update} />
          {mayWrite && <Uploader app={app} folder={params.folder ?? ""} />}
          {list.isError && (
            <Alert color="red" title="The files cannot be listed">
              {describe(list.error)}
            </Alert>
          )}
          {list.isPending && !list.isError && <PageLoader label="Loading the files" />}
          {list.data && (
            <div style={{ opacity: list.isPlaceholderData ? 0.6 : 1 }} aria-busy={list.isFetching}>
              {list.data.items.length === 0 ? (
                <Paper withBorder p="xl">
                  <Stack align="center" gap="xs">
                    <Text>{filtered ? "No files match." : "The library is empty."}</Text>
                    {filtered ? (
                      <Button variant="light" onClick={() => update({ q: "", kind: null, tags: [], folder: null, uploadedBy: "" })}>
                        Clear filters
                      </Button>
                    ) : (
                      mayWrite && <Text size="sm" c="dimmed">Drop files above to upload them.</Text>
                    )}
                  </Stack>
                </Paper>
              ) : params.view === "grid" ? (
                <MediaGrid files={list.data.items} onOpen={(f) => open(f.id)} />
              ) : (
                <MediaTable files={list.data.items} onOpen={(f) => open(f.id)} />
              )}
            </div>
          )}
          {list.data && total > 0 && (
            <Group justify="space-between" wrap="wrap" gap="xs">
              <Select
                aria-label="Files per page"
                data={pageSizes.map((n) => ({ value: String(n), label: `${n} per page` }))}
                value={String(params.limit)}
                onChange={(v) => v && update({ limit: Number(v) })}
                w={130}
                size="xs"
                allowDeselect={false}
              />
              <PageNav total={pages} value={Math.min(params.page, pages)} onChange={(page) => update({ page })} size="sm" withEdges />
            </Group>
          )}
        </Stack>
      </Grid.Col>
    </Grid>
      <MediaDetail app={app} id={params.file} folders={facets.data?.folders ?? []} tags={facets.data?.tags ?? []} onClose={() => open(null)} />
    </>
  );
}
