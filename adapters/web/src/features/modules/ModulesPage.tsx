// The modules (content structures) of the current app: search, sort,
// pages, and the actions the user's rights allow (the others disabled,
// saying why).
import { Alert, Anchor, Group, Paper, Select, Stack, Table, Text, TextInput, Title, VisuallyHidden } from "@mantine/core";
import { IconForms, IconLayoutList, IconPencil, IconPlus, IconSearch, IconTrash } from "@tabler/icons-react";
import dayjs from "dayjs";
import { useMemo, useState } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router";
import { describe } from "../../lib/errors";
import { useApps, useRights } from "../access/hooks";
import { can, whyNot } from "../access/rights";
import { PageLoader } from "../shell/PageLoader";
import { PageNav } from "../shell/PageNav";
import { useModules, type Module } from "./api";
import { GuardedButton, GuardedIcon } from "./components/Guarded";
import { CreateModuleModal, DeleteModuleModal, RenameModuleModal } from "./components/ModuleDialogs";

const pageSize = 20;

type Sort = "updated-desc" | "updated-asc" | "name-asc" | "name-desc";
const sorts: { value: Sort; label: string }[] = [
  { value: "updated-desc", label: "Last updated first" },
  { value: "updated-asc", label: "Least recently updated first" },
  { value: "name-asc", label: "Name, A to Z" },
  { value: "name-desc", label: "Name, Z to A" },
];

const changedAt = (m: Module) => m.updatedAt ?? m.createdAt;

function order(list: Module[], sort: Sort): Module[] {
  const byName = (a: Module, b: Module) => a.name.localeCompare(b.name, undefined, { sensitivity: "base", numeric: true });
  const out = [...list];
  switch (sort) {
    case "name-asc":
      return out.sort(byName);
    case "name-desc":
      return out.sort((a, b) => byName(b, a));
    case "updated-asc":
      return out.sort((a, b) => changedAt(a) - changedAt(b));
    default:
      return out.sort((a, b) => changedAt(b) - changedAt(a));
  }
}

export function ModulesPage() {
  const { appId = "" } = useParams();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const modules = useModules(appId);
  const apps = useApps();
  const rights = useRights();
  const [creating, setCreating] = useState(params.get("fromType") !== null);
  const [renaming, setRenaming] = useState<Module>();
  const [deleting, setDeleting] = useState<Module>();

  // Search, sort and page live in the URL, so a reload or a link keeps them.
  const q = params.get("q") ?? "";
  const sort = (params.get("sort") as Sort) || "updated-desc";
  const page = Math.max(1, Number(params.get("page")) || 1);
  const set = (changes: Record<string, string | undefined>) =>
    setParams(
      (p) => {
        for (const [k, v] of Object.entries(changes)) v ? p.set(k, v) : p.delete(k);
        return p;
      },
      { replace: true },
    );

  const shown = useMemo(() => {
    const needle = q.trim().toLowerCase();
    return order((modules.data ?? []).filter((m) => !needle || m.name.toLowerCase().includes(needle)), sort);
  }, [modules.data, q, sort]);
  const pages = Math.max(1, Math.ceil(shown.length / pageSize));
  const current = Math.min(page, pages);
  const rows = shown.slice((current - 1) * pageSize, current * pageSize);

  const appName = apps.data?.find((a) => a.id === appId)?.name;
  const mayCreate = can(rights, "write", { app: appId });

  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-end" wrap="wrap">
        <div>
          <Title order={2}>Content</Title>
          <Text c="dimmed" size="sm">
            The modules (content structures) of {appName ? `“${appName}”` : "this app"}
            {modules.data ? `: ${modules.data.length}` : ""}
          </Text>
        </div>
        <GuardedButton
          label="New module"
          leftSection={<IconPlus size={18} aria-hidden />}
          refused={rights && !mayCreate ? "You may not create modules in this app: it needs the “write” right on the app. Ask an administrator." : undefined}
          disabled={!rights}
          onClick={() => setCreating(true)}
        />
      </Group>

      <Group gap="sm" wrap="wrap">
        <TextInput
          aria-label="Search modules by name"
          placeholder="Search by name"
          leftSection={<IconSearch size={16} aria-hidden />}
          value={q}
          onChange={(e) => set({ q: e.currentTarget.value || undefined, page: undefined })}
          w={{ base: "100%", xs: 260 }}
        />
        <Select
          aria-label="Sort modules"
          data={sorts}
          value={sort}
          onChange={(v) => set({ sort: v && v !== "updated-desc" ? v : undefined })}
          allowDeselect={false}
          w={{ base: "100%", xs: 240 }}
        />
      </Group>

      {modules.isLoading ? (
        <PageLoader label="Loading modules" />
      ) : modules.error ? (
        <Alert color="red" title="The modules could not be loaded">
          {describe(modules.error)}
        </Alert>
      ) : shown.length === 0 ? (
        <Paper withBorder p="xl">
          <Stack align="center" gap="xs">
            <Text fw={600}>{q ? "No module matches your search" : "No modules yet"}</Text>
            <Text c="dimmed" size="sm" ta="center">
              {q
                ? "Try another part of the name."
                : mayCreate
                  ? "A module is a content structure: its fields say what each item holds. Create one to start."
                  : "There is no module you may read in this app."}
            </Text>
          </Stack>
        </Paper>
      ) : (
        <>
          <Paper withBorder>
            <Table.ScrollContainer minWidth={500}>
              <Table striped highlightOnHover verticalSpacing="xs">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th ta="right">Fields</Table.Th>
                    <Table.Th>Single</Table.Th>
                    <Table.Th>Updated</Table.Th>
                    <Table.Th>
                      <VisuallyHidden>Actions</VisuallyHidden>
                    </Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {rows.map((m) => {
                    const scope = { app: appId, module: m.id };
                    const mayUpdate = can(rights, "update", scope);
                    const mayDelete = can(rights, "delete", scope);
                    return (
                      <Table.Tr key={m.id}>
                        <Table.Td>
                          <Anchor c="indigo.8" component={Link} to={`/apps/${appId}/modules/${m.id}/items`} fw={600} style={{ overflowWrap: "anywhere" }}>
                            {m.name}
                          </Anchor>
                        </Table.Td>
                        <Table.Td ta="right">{m.fields?.length ?? "–"}</Table.Td>
                        <Table.Td>{m.isSingle ? <Text size="sm" fw={600}>Yes</Text> : <Text size="sm">No</Text>}</Table.Td>
                        <Table.Td>
                          <Text size="sm">
                            <span style={{ whiteSpace: "nowrap" }}>{dayjs(changedAt(m)).format("D MMM YYYY")}</span>,{" "}
                            <span style={{ whiteSpace: "nowrap" }}>{dayjs(changedAt(m)).format("HH:mm")}</span>
                          </Text>
                          <Text size="xs" c="dimmed">
                            by {m.updatedBy ?? m.createdBy}
                          </Text>
                        </Table.Td>
                        <Table.Td>
                          <Group gap={4} justify="flex-end" wrap="nowrap">
                            <GuardedIcon label={`Items of ${m.name}`} to={`/apps/${appId}/modules/${m.id}/items`}>
                              <IconLayoutList size={18} aria-hidden />
                            </GuardedIcon>
                            <GuardedIcon label={`Structure of ${m.name}`} to={`/apps/${appId}/modules/${m.id}/structure`}>
                              <IconForms size={18} aria-hidden />
                            </GuardedIcon>
                            <GuardedIcon
                              label={`Rename ${m.name}`}
                              refused={mayUpdate ? undefined : whyNot("update", scope)}
                              onClick={() => setRenaming(m)}
                            >
                              <IconPencil size={18} aria-hidden />
                            </GuardedIcon>
                            <GuardedIcon
                              label={`Delete ${m.name}`}
                              color="red.9"
                              refused={mayDelete ? undefined : whyNot("delete", scope)}
                              onClick={() => setDeleting(m)}
                            >
                              <IconTrash size={18} aria-hidden />
                            </GuardedIcon>
                          </Group>
                        </Table.Td>
                      </Table.Tr>
                    );
                  })}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          </Paper>
          <Group justify="space-between">
            <Text size="sm" c="dimmed">
              {(current - 1) * pageSize + 1}–{Math.min(current * pageSize, shown.length)} of {shown.length}
            </Text>
            {pages > 1 && (
              <PageNav total={pages} value={current} onChange={(p) => set({ page: p > 1 ? String(p) : undefined })} />
            )}
          </Group>
        </>
      )}

      <CreateModuleModal
        app={appId}
        opened={creating}
        initialType={params.get("fromType") ?? undefined}
        onClose={() => {
          setCreating(false);
          if (params.has("fromType")) set({ fromType: undefined });
        }}
        onCreated={(m) => navigate(`/apps/${appId}/modules/${m.id}/structure`)}
      />
      <RenameModuleModal app={appId} module={renaming} onClose={() => setRenaming(undefined)} />
      <DeleteModuleModal app={appId} module={deleting} onClose={() => setDeleting(undefined)} />
    </Stack>
  );
}
