// The structure editor: a module's name, single flag, allowed tags and
// ordered fields (all 21 HALO types with their rules), checked as the API
// checks them, saved in one PUT. The API's refusals are shown where they
// belong: at the field a 400 names, and a 409's affected items as links.
import { Alert, Anchor, Breadcrumbs, Button, Grid, Group, Modal, Paper, Stack, Switch, Text, TextInput, Title } from "@mantine/core";
import { modals } from "@mantine/modals";
import { IconLayoutList, IconPlus, IconTemplate } from "@tabler/icons-react";
import { useEffect, useState } from "react";
import { Link, useBlocker, useParams } from "react-router";
import { describe } from "../../lib/errors";
import { useSelf, useRights } from "../access/hooks";
import { can, whyNot } from "../access/rights";
import { CreateTypeModal } from "../moduletypes/CreateTypeModal";
import { PageLoader } from "../shell/PageLoader";
import { useModule, useModules, useUpdateModule } from "./api";
import { GuardedButton, toast } from "./components/Guarded";
import { Warning } from "./components/ModuleDialogs";
import { ConflictAlert } from "./structure/ConflictAlert";
import { bodyOfDraft, checkDraft, newField, type DraftField } from "./structure/draft";
import { FieldCard } from "./structure/FieldCard";
import { TagsEditor } from "./structure/TagsEditor";
import { useStructureDraft } from "./structure/useStructureDraft";

const focusSoon = (selector: string) =>
  requestAnimationFrame(() => requestAnimationFrame(() => document.querySelector<HTMLElement>(selector)?.focus()));

export function StructurePage() {
  const { appId = "", moduleId = "" } = useParams();
  const module = useModule(moduleId);
  const modules = useModules(appId);
  const rights = useRights();
  const self = useSelf();
  const save = useUpdateModule(appId);
  const s = useStructureDraft(module.data);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const [attempted, setAttempted] = useState(false);
  const [announce, setAnnounce] = useState("");
  const [asType, setAsType] = useState(false);
  const scope = { app: appId, module: moduleId };
  const mayUpdate = can(rights, "update", scope);
  const readOnly = !mayUpdate;

  const blocker = useBlocker(({ currentLocation, nextLocation }) => s.dirty && currentLocation.pathname !== nextLocation.pathname);
  useEffect(() => {
    if (!s.dirty) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [s.dirty]);

  if (module.isLoading || (module.data && !s.draft)) return <PageLoader label="Loading the structure" />;
  if (module.error || !s.draft || !module.data) {
    return (
      <Alert color="red" title="The module could not be loaded">
        {module.error ? describe(module.error) : "It does not exist."}{" "}
        <Anchor c="indigo.8" component={Link} to={`/apps/${appId}/modules`}>
          Back to the modules
        </Anchor>
      </Alert>
    );
  }
  const draft = s.draft;
  const saved = module.data;
  const errors = checkDraft(draft);
  const shownErrors = (f: DraftField) => {
    const e = { ...(errors.fields[f.key] ?? {}) };
    if (!attempted && !f.name) delete e.name;
    return e;
  };
  const toggle = (key: string, to?: boolean) =>
    setOpen((o) => {
      const n = new Set(o);
      if (to ?? !n.has(key)) n.add(key);
      else n.delete(key);
      return n;
    });

  function add() {
    const f = newField();
    s.update((d) => ({ ...d, fields: [...d.fields, f] }));
    toggle(f.key, true);
    setAnnounce(`Added field ${draft.fields.length + 1}.`);
    focusSoon(`#field-${f.key} input`);
  }

  function move(i: number, by: -1 | 1) {
    const f = draft.fields[i];
    const j = i + by;
    s.update((d) => {
      const fields = [...d.fields];
      [fields[i], fields[j]] = [fields[j], fields[i]];
      return { ...d, fields };
    });
    setAnnounce(`${f.name || "The field"} moved to position ${j + 1} of ${draft.fields.length}.`);
    const edge = j === 0 || j === draft.fields.length - 1;
    focusSoon(`#${edge ? (by < 0 ? "down" : "up") : by < 0 ? "up" : "down"}-${f.key}`);
  }

  function remove(i: number) {
    const f = draft.fields[i];
    s.update((d) => ({ ...d, fields: d.fields.filter((x) => x.key !== f.key) }));
    setAnnounce(`Removed ${f.name || "the field"}. Discard the changes to bring it back.`);
    focusSoon(draft.fields[i + 1] ? `#field-${draft.fields[i + 1].key}` : "#add-field");
  }

  function submit() {
    setAttempted(true);
    if (errors.count) {
      const bad = draft.fields.filter((f) => errors.fields[f.key]);
      setOpen((o) => new Set([...o, ...bad.map((f) => f.key)]));
      toast("red", "Not saved", `Fix the ${errors.count === 1 ? "problem" : `${errors.count} problems`} shown first.`);
      if (errors.name) focusSoon("#module-name");
      else if (bad[0]) focusSoon(`#field-${bad[0].key}`);
      return;
    }
    const renamed = draft.name.trim() !== saved.name;
    if (!renamed) return put();
    modals.openConfirmModal({
      title: `Rename “${saved.name}” to “${draft.name.trim()}”?`,
      children: (
        <Text size="sm">
          Apps and the HALO SDKs find a module by its name: those reading “{saved.name}” stop finding it until they are updated.
        </Text>
      ),
      labels: { confirm: "Rename and save", cancel: "Cancel" },
      onConfirm: put,
    });
  }

  function put() {
    save.mutate(
      { id: moduleId, body: bodyOfDraft(draft) },
      {
        onSuccess: (m) => {
          s.reset(m);
          setAttempted(false);
          toast("green", "Structure saved", `“${m.name}” has ${m.fields?.length ?? 0} field(s).`);
        },
        onError: (err) => {
          const key = s.refused(err);
          if (key) {
            toggle(key, true);
            focusSoon(`#field-${key}`);
          } else window.scrollTo({ top: 0, behavior: "smooth" });
        },
      },
    );
  }

  const status = s.dirty ? (errors.count ? `Unsaved changes, ${errors.count} problem(s)` : "Unsaved changes") : "All changes saved";

  return (
    <Stack gap="md" pb={80}>
      <Breadcrumbs>
        <Anchor c="indigo.8" component={Link} to={`/apps/${appId}/modules`}>
          Content
        </Anchor>
        <Anchor c="indigo.8" component={Link} to={`/apps/${appId}/modules/${moduleId}/items`}>
          {saved.name}
        </Anchor>
        <Text>Structure</Text>
      </Breadcrumbs>
      <Group justify="space-between" align="flex-end">
        <Title order={2}>Structure of “{saved.name}”</Title>
        <Group gap="xs">
          <Button variant="default" component={Link} to={`/apps/${appId}/modules/${moduleId}/items`} leftSection={<IconLayoutList size={18} aria-hidden />}>
            Items
          </Button>
          {self.data?.admin && (
            <Button variant="default" onClick={() => setAsType(true)} leftSection={<IconTemplate size={18} aria-hidden />}>
              Save as module type
            </Button>
          )}
        </Group>
      </Group>

      {readOnly && rights && (
        <Alert color="indigo" title="Read only">
          {whyNot("update", scope)}
        </Alert>
      )}
      {s.changedElsewhere && (
        <Warning title="Someone else changed this module">
          Saving now replaces their change with yours.{" "}
          <Anchor c="indigo.8" component="button" type="button" onClick={() => s.reset(saved)}>
            Discard my changes and load theirs
          </Anchor>
        </Warning>
      )}
      {s.server.conflict && <ConflictAlert app={appId} err={s.server.conflict} onClose={() => s.clearServer({ conflict: undefined })} />}
      {s.server.general && (
        <Alert color="red" title="Not saved" withCloseButton closeButtonLabel="Dismiss" onClose={() => s.clearServer({ general: undefined })} role="alert">
          {s.server.general}
        </Alert>
      )}

      <Grid gap="md">
        <Grid.Col span={{ base: 12, md: 4 }} order={{ base: 1, md: 2 }}>
          <Paper withBorder p="md" component="section" aria-labelledby="settings-title">
            <Stack gap="sm">
              <Title order={3} size="h5" id="settings-title">
                Module
              </Title>
              <TextInput
                id="module-name"
                label="Name"
                required
                description={draft.name.trim() !== saved.name ? "Apps find the module by name: renaming it breaks those that use the old one." : "Apps and the SDKs find the module by this name."}
                value={draft.name}
                onChange={(e) => {
                  const name = e.currentTarget.value;
                  s.update((d) => ({ ...d, name }));
                  s.clearServer({ name: undefined });
                }}
                error={(attempted || !draft.name.trim() ? errors.name : undefined) ?? s.server.name}
                disabled={readOnly}
                maxLength={200}
              />
              <Switch
                label="Single item"
                description="The module holds one item only (a page, the app's settings)."
                checked={draft.isSingle}
                onChange={(e) => {
                  const isSingle = e.currentTarget.checked;
                  s.update((d) => ({ ...d, isSingle }));
                  s.clearServer({ isSingle: undefined });
                }}
                error={s.server.isSingle}
                disabled={readOnly}
              />
              <TagsEditor
                tags={draft.tags}
                error={errors.tags ?? s.server.tags}
                disabled={readOnly}
                onChange={(tags) => {
                  s.update((d) => ({ ...d, tags }));
                  s.clearServer({ tags: undefined });
                }}
              />
              <Text size="xs" c="dimmed">
                Localized fields hold one text per locale. This server keeps no list of a module's languages: editors add the locales
                they need in each item.
              </Text>
            </Stack>
          </Paper>
        </Grid.Col>

        <Grid.Col span={{ base: 12, md: 8 }} order={{ base: 2, md: 1 }}>
          <Stack gap="sm" component="section" aria-labelledby="fields-title">
            <Group justify="space-between">
              <Title order={3} size="h4" id="fields-title">
                Fields ({draft.fields.length})
              </Title>
              <Group gap="xs">
                {draft.fields.length > 1 && (
                  <Button
                    variant="subtle"
                    size="xs"
                    onClick={() => setOpen(open.size ? new Set() : new Set(draft.fields.map((f) => f.key)))}
                  >
                    {open.size ? "Close all" : "Open all"}
                  </Button>
                )}
              </Group>
            </Group>
            {draft.fields.length === 0 && (
              <Paper withBorder p="lg">
                <Text c="dimmed" ta="center">
                  No fields yet. A field is one value each item holds: a title, a date, an image…
                </Text>
              </Paper>
            )}
            {draft.fields.map((f, i) => (
              <FieldCard
                key={f.key}
                field={f}
                index={i}
                count={draft.fields.length}
                open={open.has(f.key)}
                errors={shownErrors(f)}
                serverError={s.server.fields[f.key]}
                disabled={readOnly}
                modules={modules.data ?? []}
                moduleId={moduleId}
                onToggle={() => toggle(f.key)}
                onChange={s.setField}
                onMove={(by) => move(i, by)}
                onRemove={() => remove(i)}
              />
            ))}
            <Group>
              <GuardedButton
                id="add-field"
                label="Add field"
                variant="light"
                leftSection={<IconPlus size={18} aria-hidden />}
                refused={readOnly && rights ? whyNot("update", scope) : undefined}
                onClick={add}
              />
            </Group>
          </Stack>
        </Grid.Col>
      </Grid>

      <Paper withBorder shadow="sm" p="sm" pos="sticky" bottom={0} style={{ zIndex: 10 }} component="section" aria-label="Save">
        <Group justify="space-between">
          <Text size="sm" role="status">
            {status}
          </Text>
          <Group gap="xs">
            <Button variant="default" disabled={!s.dirty || save.isPending} onClick={() => s.reset(saved)}>
              Discard changes
            </Button>
            <GuardedButton
              label="Save structure"
              refused={readOnly && rights ? whyNot("update", scope) : undefined}
              disabled={!s.dirty}
              loading={save.isPending}
              onClick={submit}
            />
          </Group>
        </Group>
      </Paper>
      <div aria-live="polite" style={{ position: "absolute", width: 1, height: 1, overflow: "hidden", clip: "rect(0 0 0 0)" }}>
        {announce}
      </div>

      <Modal opened={blocker.state === "blocked"} onClose={() => blocker.reset?.()} title="Leave without saving?">
        <Stack>
          <Text size="sm">The structure has unsaved changes. They are lost if you leave.</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => blocker.reset?.()}>
              Stay
            </Button>
            <Button color="red.9" onClick={() => blocker.proceed?.()}>
              Leave and lose the changes
            </Button>
          </Group>
        </Stack>
      </Modal>
      {self.data?.admin && <CreateTypeModal opened={asType} onClose={() => setAsType(false)} module={saved} />}
    </Stack>
  );
}
