// An item's history: every revision (what, when, who, what changed), any
// two side by side, field by field, and "restore this revision".
import { Alert, Anchor, Badge, Breadcrumbs, Button, Card, Group, Radio, Stack, Table, Text, Title, Tooltip, VisuallyHidden } from "@mantine/core";
import { modals } from "@mantine/modals";
import { IconArrowBackUp } from "@tabler/icons-react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { api } from "../../api/client";
import { describe, unwrap } from "../../lib/errors";
import { useCan } from "../access/hooks";
import { whyNot } from "../access/rights";
import { PageLoader } from "../shell/PageLoader";
import { conflictOf, restoreRevision, useHistory, useItem, useModule } from "./editor/api";
import { notifications } from "@mantine/notifications";
import { StateBadge } from "./editor/PublishPanel";
import { browserZone, show } from "./editor/zones";
import { RevisionDiff } from "./history/RevisionDiff";
import { changedLabel, eventLabel } from "./history/labels";

export function HistoryPage() {
  const { appId = "", itemId = "" } = useParams();
  const qc = useQueryClient();
  const item = useItem(itemId);
  const module = useModule(item.data?.module);
  const history = useHistory(itemId);
  const appModules = useQuery({
    queryKey: ["modules", appId],
    queryFn: async () => unwrap(await api.GET("/api/generalcontent/module", { params: { query: { app: appId, skip: true, withFields: false } } })),
    select: (r) => (Array.isArray(r) ? r : r.items).map((m) => m.id),
  });
  const [pick, setPick] = useState<{ a?: number; b?: number }>({});
  const [busy, setBusy] = useState<number>();
  const mayUpdate = useCan("update", { app: appId, module: item.data?.module, item: itemId });
  const zone = browserZone;

  const failed = item.error ?? history.error ?? module.error;
  if (failed) return <Alert color="red" title="The history cannot be shown">{describe(failed)}</Alert>;
  if (!item.data || !history.data || !module.data) return <PageLoader label="Loading the history" />;

  const revisions = history.data;
  const latest = revisions[revisions.length - 1];
  const a = pick.a ?? (revisions.length > 1 ? revisions[revisions.length - 2].revision : latest.revision);
  const b = pick.b ?? latest.revision;
  const ra = revisions.find((r) => r.revision === a);
  const rb = revisions.find((r) => r.revision === b);
  const current = item.data;

  const restore = (revision: number) =>
    modals.openConfirmModal({
      title: `Restore revision ${revision}?`,
      children: (
        <Text size="sm">
          The item's name, values and tags become those of revision {revision}, recorded as a new revision; its publication dates do not change.
        </Text>
      ),
      labels: { confirm: "Restore", cancel: "Cancel" },
      onConfirm: async () => {
        setBusy(revision);
        try {
          const saved = await restoreRevision(itemId, revision, current.revision);
          qc.setQueryData(["item", itemId], saved);
          await qc.invalidateQueries({ queryKey: ["history", itemId] });
          void qc.invalidateQueries({ queryKey: ["items", saved.module] });
          setPick({});
          notifications.show({ color: "green", message: `Revision ${revision} restored (now revision ${saved.revision})` });
        } catch (err) {
          const theirs = conflictOf(err);
          if (theirs) {
            qc.setQueryData(["item", itemId], theirs);
            void qc.invalidateQueries({ queryKey: ["history", itemId] });
            notifications.show({ color: "orange", title: "Changed meanwhile", message: `${theirs.updatedBy ?? "Someone"} changed the item; check the history and try again.` });
          } else notifications.show({ color: "red", title: "Not restored", message: describe(err) });
        } finally {
          setBusy(undefined);
        }
      },
    });

  return (
    <Stack gap="md">
      <Breadcrumbs>
        <Anchor component={Link} to={`/apps/${appId}/modules`}>
          Content
        </Anchor>
        <Anchor component={Link} to={`/apps/${appId}/modules/${module.data.id}/items`}>
          {module.data.name}
        </Anchor>
        <Anchor component={Link} to={`/apps/${appId}/items/${itemId}`}>
          {current.name}
        </Anchor>
        <Text size="sm">History</Text>
      </Breadcrumbs>
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={2}>History of “{current.name}”</Title>
          <StateBadge item={current} />
        </Group>
        <Button component={Link} to={`/apps/${appId}/items/${itemId}`} variant="default">
          Back to the item
        </Button>
      </Group>

      <Card withBorder padding="sm" component="section" aria-labelledby="revisions-title">
        <Title order={3} size="h5" id="revisions-title" mb="xs">
          {revisions.length} {revisions.length === 1 ? "revision" : "revisions"} · pick two to compare (times in {zone})
        </Title>
        <Table.ScrollContainer minWidth={720}>
          <Table highlightOnHover verticalSpacing={6} aria-label="Revisions">
            <Table.Thead>
              <Table.Tr>
                <Table.Th w={60}>Old</Table.Th>
                <Table.Th w={60}>New</Table.Th>
                <Table.Th w={60}>#</Table.Th>
                <Table.Th>What</Table.Th>
                <Table.Th>When</Table.Th>
                <Table.Th>Who</Table.Th>
                <Table.Th>Changed</Table.Th>
                <Table.Th w={120}>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {[...revisions].reverse().map((r) => (
                <Table.Tr key={r.revision} data-revision={r.revision}>
                  <Table.Td>
                    <Radio
                      name="old"
                      aria-label={`Compare from revision ${r.revision}`}
                      checked={a === r.revision}
                      onChange={() => setPick((p) => ({ a: r.revision, b: p.b ?? b }))}
                    />
                  </Table.Td>
                  <Table.Td>
                    <Radio
                      name="new"
                      aria-label={`Compare to revision ${r.revision}`}
                      checked={b === r.revision}
                      onChange={() => setPick((p) => ({ a: p.a ?? a, b: r.revision }))}
                    />
                  </Table.Td>
                  <Table.Td>{r.revision}</Table.Td>
                  <Table.Td>{eventLabel[r.type] ?? r.type}</Table.Td>
                  <Table.Td>{show(r.at, zone)}</Table.Td>
                  <Table.Td>{r.by}</Table.Td>
                  <Table.Td>
                    <Group gap={4}>
                      {r.changed.map((c) => (
                        <Badge key={c} size="sm" variant="outline" color="gray.8" tt="none">
                          {changedLabel(c)}
                        </Badge>
                      ))}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    {r.revision !== latest.revision && (
                      <Tooltip label={whyNot("update", { app: appId, item: itemId })} disabled={mayUpdate} multiline w={240}>
                        <span>
                          <Button
                            size="compact-sm"
                            variant="light"
                            leftSection={<IconArrowBackUp size={14} />}
                            disabled={!mayUpdate || !!current.deletedAt || busy !== undefined}
                            loading={busy === r.revision}
                            onClick={() => restore(r.revision)}
                            aria-label={`Restore revision ${r.revision}`}
                          >
                            Restore
                          </Button>
                        </span>
                      </Tooltip>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Card>

      <Card withBorder padding="sm" component="section" aria-labelledby="diff-title">
        <Title order={3} size="h5" id="diff-title" mb="xs">
          Revision {a} ({ra ? `${eventLabel[ra.type]}, ${show(ra.at, zone)}, ${ra.by}` : "?"}) compared with revision {b} (
          {rb ? `${eventLabel[rb.type]}, ${show(rb.at, zone)}, ${rb.by}` : "?"})
        </Title>
        {ra && rb && <RevisionDiff module={module.data} a={ra} b={rb} zone={zone} appModules={appModules.data ?? []} />}
      </Card>
    </Stack>
  );
}
