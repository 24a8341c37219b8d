// Module types: reusable field sets. Every CMS user reads them, exports
// them and creates modules from them; administrators create (from a
// module's fields), delete and import them.
import { Alert, FileButton, Group, List, Paper, Stack, Table, Text, Title, VisuallyHidden } from "@mantine/core";
import { modals } from "@mantine/modals";
import { IconDownload, IconPlus, IconTrash, IconUpload, IconBox } from "@tabler/icons-react";
import { useState } from "react";
import { ApiError, describe } from "../../lib/errors";
import { fieldType } from "../../lib/fieldTypes";
import { useSelf } from "../access/hooks";
import { GuardedButton, GuardedIcon, toast } from "../modules/components/Guarded";
import { PageLoader } from "../shell/PageLoader";
import { useCurrentApp } from "../shell/AppSwitcher";
import { download, saveFile, useDeleteModuleType, useImportModuleTypes, useModuleTypes, type ModuleType, type ModuleTypeDocument } from "./api";
import { CreateTypeModal } from "./CreateTypeModal";

const adminsOnly = (what: string) => `Only administrators may ${what} module types.`;

export function ModuleTypesPage() {
  const types = useModuleTypes();
  const self = useSelf();
  const app = useCurrentApp(undefined);
  const admin = !!self.data?.admin;
  const del = useDeleteModuleType();
  const imp = useImportModuleTypes();
  const [creating, setCreating] = useState(false);
  const [imported, setImported] = useState<ModuleType[]>();
  const [fileKey, setFileKey] = useState(0);

  async function exportTypes(t?: ModuleType) {
    try {
      const { doc, filename } = await download(t?.id);
      saveFile(filename, doc);
      toast("green", "Exported", `${doc.moduleTypes.length} module type(s) in ${filename}.`);
    } catch (err) {
      toast("red", "The export failed", describe(err));
    }
  }

  async function importFile(file: File | null) {
    setFileKey((k) => k + 1); // the same file can be chosen again
    if (!file) return;
    let doc: ModuleTypeDocument;
    try {
      doc = JSON.parse(await file.text());
      if (!doc || !Array.isArray(doc.moduleTypes)) throw new Error("it has no moduleTypes list");
    } catch (err) {
      toast("red", "Not a module types document", `${file.name}: ${(err as Error).message}`);
      return;
    }
    const known = new Set((types.data ?? []).map((t) => t.id));
    const replaced = doc.moduleTypes.filter((t) => t.id && known.has(t.id)).length;
    modals.openConfirmModal({
      title: `Import ${doc.moduleTypes.length} module type(s)?`,
      children: (
        <Stack gap="xs">
          <Text size="sm">From {file.name}: {doc.moduleTypes.map((t) => t.name).join(", ") || "nothing"}.</Text>
          <Text size="sm">
            {replaced
              ? `${replaced} of them replace the module type of the same id here. Modules created from them earlier keep their fields.`
              : "They are added; none has the id of a module type here."}{" "}
            The document is saved whole or not at all.
          </Text>
        </Stack>
      ),
      labels: { confirm: "Import", cancel: "Cancel" },
      onConfirm: () =>
        imp.mutate(doc, {
          onSuccess: (r) => {
            setImported(r.moduleTypes);
            toast("green", "Imported", `${r.imported} module type(s) saved.`);
          },
        }),
    });
  }

  function remove(t: ModuleType) {
    modals.openConfirmModal({
      title: `Delete the module type “${t.name}”?`,
      children: <Text size="sm">Modules created from it keep their fields. New modules can no longer start from it.</Text>,
      labels: { confirm: "Delete module type", cancel: "Cancel" },
      confirmProps: { color: "red.9" },
      onConfirm: () =>
        del.mutate(t.id, {
          onSuccess: () => toast("green", "Module type deleted", `“${t.name}” was deleted.`),
          onError: (err) => toast("red", "The module type was not deleted", describe(err)),
        }),
    });
  }

  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-end" wrap="wrap">
        <div>
          <Title order={2}>Module types</Title>
          <Text c="dimmed" size="sm">
            Reusable field sets: a new module can start with the fields of one. Export them to move them between servers.
          </Text>
        </div>
        <Group gap="xs">
          <GuardedButton
            label="Export all"
            variant="default"
            leftSection={<IconDownload size={18} aria-hidden />}
            refused={types.data?.length === 0 ? "There is no module type to export." : undefined}
            onClick={() => exportTypes()}
          />
          {admin ? (
            <FileButton key={fileKey} onChange={importFile} accept="application/json,.json">
              {(props) => (
                <GuardedButton {...props} label="Import" variant="default" loading={imp.isPending} leftSection={<IconUpload size={18} aria-hidden />} />
              )}
            </FileButton>
          ) : (
            <GuardedButton label="Import" variant="default" leftSection={<IconUpload size={18} aria-hidden />} refused={self.data ? adminsOnly("import") : undefined} />
          )}
          <GuardedButton
            label="New from a module"
            leftSection={<IconPlus size={18} aria-hidden />}
            refused={self.data && !admin ? adminsOnly("create") : undefined}
            disabled={!self.data}
            onClick={() => setCreating(true)}
          />
        </Group>
      </Group>

      {imp.error && (
        <Alert color="red" title="Nothing was imported" withCloseButton closeButtonLabel="Dismiss" onClose={() => imp.reset()} role="alert">
          {describe(imp.error)}
          {imp.error instanceof ApiError && typeof imp.error.extra.moduleType === "number"
            ? ` (module type ${imp.error.extra.moduleType + 1} of the document)`
            : ""}
        </Alert>
      )}
      {imported && (
        <Alert color="green" title={`Imported ${imported.length} module type(s)`} withCloseButton closeButtonLabel="Dismiss" onClose={() => setImported(undefined)}>
          <List size="sm">
            {imported.map((t) => (
              <List.Item key={t.id}>
                {t.name}: {t.fields.length} field(s)
              </List.Item>
            ))}
          </List>
        </Alert>
      )}

      {types.isLoading ? (
        <PageLoader label="Loading module types" />
      ) : types.error ? (
        <Alert color="red" title="The module types could not be loaded">
          {describe(types.error)}
        </Alert>
      ) : !types.data?.length ? (
        <Paper withBorder p="xl">
          <Stack align="center" gap="xs">
            <Text fw={600}>No module types yet</Text>
            <Text c="dimmed" size="sm" ta="center">
              {admin ? "Create one from a module's fields, or import a document exported from another server." : "An administrator creates them."}
            </Text>
          </Stack>
        </Paper>
      ) : (
        <Paper withBorder>
          <Table.ScrollContainer minWidth={640}>
            <Table striped verticalSpacing="xs">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Fields</Table.Th>
                  <Table.Th>Single</Table.Th>
                  <Table.Th>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {types.data.map((t) => (
                  <Table.Tr key={t.id}>
                    <Table.Td>
                      <Text fw={600}>{t.name}</Text>
                      <Text size="xs" c="dimmed">
                        {t.id}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">
                        {t.fields.length === 0
                          ? "None"
                          : t.fields
                              .slice(0, 8)
                              .map((f) => `${f.name}: ${fieldType(f.type)?.name ?? f.type}`)
                              .join(", ") + (t.fields.length > 8 ? `, and ${t.fields.length - 8} more` : "")}
                      </Text>
                    </Table.Td>
                    <Table.Td>{t.isSingle ? "Yes" : "No"}</Table.Td>
                    <Table.Td>
                      <Group gap={4} justify="flex-end" wrap="nowrap">
                        <GuardedIcon
                          label={`New module from ${t.name}`}
                          to={app ? `/apps/${app}/modules?fromType=${encodeURIComponent(t.id)}` : undefined}
                          refused={app ? undefined : "Choose an app first (top bar)."}
                        >
                          <IconBox size={18} aria-hidden />
                        </GuardedIcon>
                        <GuardedIcon label={`Export ${t.name}`} onClick={() => exportTypes(t)}>
                          <IconDownload size={18} aria-hidden />
                        </GuardedIcon>
                        <GuardedIcon label={`Delete ${t.name}`} color="red.9" refused={admin ? undefined : adminsOnly("delete")} onClick={() => remove(t)}>
                          <IconTrash size={18} aria-hidden />
                        </GuardedIcon>
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </Paper>
      )}
      {!app && (
        <Text size="sm" c="dimmed">
          To create a module from a module type, choose an app in the top bar first.
        </Text>
      )}
      {admin && <CreateTypeModal opened={creating} onClose={() => setCreating(false)} defaultApp={app} />}
    </Stack>
  );
}
