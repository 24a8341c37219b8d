// The item editor: the form (name, a widget per field, tags), saving with
// the revision it loaded (no lost updates: a refused save opens the
// conflict dialog), publishing, and what happens when someone else changes
// the open item (a quiet refresh, or a banner when the form holds edits).
import { Alert, Anchor, Breadcrumbs, Button, Grid, Group, MultiSelect, Paper, Stack, Text, TextInput, Title, Tooltip } from "@mantine/core";
import { useHotkeys } from "@mantine/hooks";
import { modals } from "@mantine/modals";
import { IconDeviceFloppy, IconHistory } from "@tabler/icons-react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useBlocker, useNavigate } from "react-router";
import { api } from "../../../api/client";
import { ApiError, describe, unwrap } from "../../../lib/errors";
import { kindOf } from "../../../lib/fieldTypes";
import { useCan } from "../../access/hooks";
import { whyNot } from "../../access/rights";
import { conflictOf, createItem, saveItem, type Content } from "./api";
import { ConflictDialog } from "./ConflictDialog";
import { notifications } from "@mantine/notifications";
import { warnStyles } from "./styles";
import { LocalesPicker, ZonePicker } from "./EditorToolbar";
import { FieldInput } from "./FieldInput";
import { changedParts, draftOf, partsOf, type Draft, type Item, type Module, type Tag } from "./model";
import { PublishPanel, StateBadge } from "./PublishPanel";
import { checkDraft, errorKey } from "./validate";
import { browserZone, show } from "./zones";

interface Props {
  appId: string;
  module: Module;
  /** The item as the query cache has it now (undefined: a new item). */
  latest?: Item;
}

const content = (module: Module, d: Draft): Content => ({
  name: d.name,
  values: Object.fromEntries((module.fields ?? []).map((f) => [f.name, d.values[f.name] ?? null])),
  tags: d.tags.map((t) => ({ name: t.name, value: t.value, ...(t.id ? { id: t.id } : {}), ...(t.tagType ? { tagType: t.tagType } : {}) })),
});

const inputId = (key: string) => `input-${key.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0)}`)}`;

function useAppModules(appId: string) {
  return useQuery({
    queryKey: ["modules", appId],
    queryFn: async () => unwrap(await api.GET("/api/generalcontent/module", { params: { query: { app: appId, skip: true, withFields: false } } })),
    select: (r) => (Array.isArray(r) ? r : r.items).map((m) => m.id),
  });
}

export function Editor({ appId, module, latest }: Props) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const fields = useMemo(() => module.fields ?? [], [module.fields]);
  const withTags = module.tags.length > 0 || (latest?.tags.length ?? 0) > 0;
  const parts = useMemo(() => partsOf(module, withTags), [module, withTags]);
  const appModules = useAppModules(appId).data ?? [];

  const [base, setBase] = useState<Item | undefined>(latest);
  const [draft, setDraft] = useState<Draft>(() => draftOf(latest, module));
  const baseDraft = useMemo(() => draftOf(base, module), [base, module]);
  const dirty = changedParts(parts, draft, baseDraft).length > 0;
  const [busy, setBusy] = useState(false);
  const [commanding, setCommanding] = useState(false);
  const [tried, setTried] = useState(false);
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [widgetErrors, setWidgetErrors] = useState<Record<string, string>>({});
  const [conflict, setConflict] = useState<{ theirs: Item; mode: "save" | "merge" }>();
  const [remote, setRemote] = useState<Item>();
  const [zone, setZone] = useState(browserZone);
  const leaving = useRef(false);

  const scope = { app: appId, module: module.id, item: base?.id };
  const mayUpdate = useCan("update", scope);
  const mayWrite = useCan("write", { app: appId, module: module.id });
  const mayDelete = useCan("delete", scope);
  const deleted = !!base?.deletedAt;
  const readOnly = base ? !mayUpdate || deleted : !mayWrite;

  const localized = fields.filter((f) => kindOf(f) === "localized");
  const held = useMemo(
    () => Array.from(new Set(localized.flatMap((f) => Object.keys((draft.values[f.name] as object | null) ?? {})))),
    [localized, draft.values],
  );
  const [extraLocales, setExtraLocales] = useState<string[]>([]);
  const locales = Array.from(new Set([...held, ...extraLocales]));
  useEffect(() => {
    if (localized.length && locales.length === 0) setExtraLocales([navigator.language || "en"]);
  }, [localized.length, locales.length]);

  // Someone else's change reached the cache (the live stream refetches it).
  useEffect(() => {
    if (!latest || !base || busy || commanding || latest.id !== base.id || latest.revision <= base.revision) return;
    if (!dirty) {
      setBase(latest);
      setDraft(draftOf(latest, module));
      setRemote(undefined);
    } else if (changedParts(parts, draftOf(latest, module), draftOf(base, module)).length === 0) {
      setBase(latest); // only its dates changed: nothing of the user's edits to merge
    } else setRemote(latest);
  }, [latest, base, busy, commanding, dirty, module, parts]);

  const clientErrors = useMemo(() => ({ ...checkDraft(fields, draft), ...widgetErrors }), [fields, draft, widgetErrors]);
  const errorAt = (key: string) => serverErrors[key] ?? (tried || touched.has(key) ? clientErrors[key] : undefined);

  const scrollTo = (key: string) => {
    const el = document.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`);
    el?.scrollIntoView({ behavior: "smooth", block: "center" });
    el?.querySelector<HTMLElement>("input, textarea, [contenteditable=true]")?.focus({ preventScroll: true });
  };

  const change = (key: string, d: Draft) => {
    setDraft(d);
    setTouched((t) => (t.has(key) ? t : new Set(t).add(key)));
    if (serverErrors[key]) setServerErrors(({ [key]: _, ...rest }) => rest);
  };

  const adopt = useCallback(
    (saved: Item) => {
      qc.setQueryData(["item", saved.id], saved);
      void qc.invalidateQueries({ queryKey: ["items", saved.module] });
      void qc.invalidateQueries({ queryKey: ["history", saved.id] });
      setBase(saved);
      setRemote(undefined);
    },
    [qc],
  );

  const save = async (d: Draft = draft, on: Item | undefined = base) => {
    setTried(true);
    const errs = { ...checkDraft(fields, d), ...widgetErrors };
    const first = Object.keys(errs).sort((a, b) => order(a) - order(b))[0];
    if (first) {
      scrollTo(first);
      notifications.show({ color: "red", title: "Not saved", message: `Check ${label(first)}: ${errs[first]}` });
      return;
    }
    setBusy(true);
    try {
      const saved = on ? await saveItem(on, content(module, d)) : await createItem(module.id, content(module, d));
      adopt(saved);
      setDraft(draftOf(saved, module));
      setTouched(new Set());
      setTried(false);
      setServerErrors({});
      notifications.show({ color: "green", message: on ? "Saved" : "Item created" });
      if (!on) {
        leaving.current = true;
        navigate(`/apps/${appId}/items/${saved.id}`, { replace: true });
      }
    } catch (err) {
      const theirs = conflictOf(err);
      if (theirs && on) {
        setConflict({ theirs, mode: "save" });
      } else if (err instanceof ApiError && err.status === 400 && errorKey(err.extra)) {
        const key = errorKey(err.extra)!;
        setServerErrors({ [key]: typeof err.extra.message === "string" ? err.extra.message : err.message });
        scrollTo(key);
        notifications.show({ color: "red", title: "Not saved", message: err.message });
      } else {
        notifications.show({ color: "red", title: "Not saved", message: describe(err) });
      }
    } finally {
      setBusy(false);
    }
  };

  const order = (key: string) => (key === "name" ? -1 : fields.findIndex((f) => `values.${f.name}` === key));
  const label = (key: string) => (key === "name" ? "the name" : key.replace(/^values\./, ""));

  useHotkeys([["mod+S", () => !readOnly && !busy && void save()]], []);

  // Leaving with unsaved edits asks first.
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) => dirty && !busy && !leaving.current && currentLocation.pathname !== nextLocation.pathname,
  );
  const blocked = useRef(false);
  useEffect(() => {
    if (blocker.state !== "blocked" || blocked.current) return;
    blocked.current = true;
    modals.openConfirmModal({
      title: "Leave without saving?",
      children: <Text size="sm">Your changes to this item are not saved.</Text>,
      labels: { confirm: "Leave", cancel: "Stay" },
      confirmProps: { color: "red" },
      onConfirm: () => blocker.proceed?.(),
      onCancel: () => blocker.reset?.(),
      onClose: () => (blocked.current = false),
    });
  }, [blocker]);

  const onChanged = (item: Item) => {
    adopt(item);
    if (!dirty) setDraft(draftOf(item, module));
  };
  const onConflict = (theirs: Item) => {
    if (!dirty) {
      adopt(theirs);
      setDraft(draftOf(theirs, module));
      notifications.show({
        color: "orange",
        title: "Changed meanwhile",
        message: `${theirs.updatedBy ?? "Someone"} changed this item at ${show(theirs.updatedAt, zone)}. It is reloaded: check it and try again.`,
      });
    } else setConflict({ theirs, mode: "merge" });
  };

  const title = base ? base.name || "(no name)" : "New item";
  return (
    <Stack gap="md">
      <Breadcrumbs>
        <Anchor component={Link} to={`/apps/${appId}/modules`}>
          Content
        </Anchor>
        <Anchor component={Link} to={`/apps/${appId}/modules/${module.id}/items`}>
          {module.name}
        </Anchor>
        <Text size="sm">{title}</Text>
      </Breadcrumbs>
      <Group justify="space-between" wrap="wrap" gap="sm">
        <Group gap="sm">
          <Title order={2}>{title}</Title>
          {base && <StateBadge item={base} />}
          {dirty && (
            <Text size="sm" c="red.9" fw={500}>
              Unsaved changes
            </Text>
          )}
        </Group>
        <Group gap="xs">
          {base && (
            <Button component={Link} to={`/apps/${appId}/items/${base.id}/history`} variant="default" leftSection={<IconHistory size={16} />}>
              History
            </Button>
          )}
          <Tooltip label={deleted ? "Restore the item to edit it" : whyNot(base ? "update" : "write", scope)} disabled={!readOnly}>
            <span>
              <Button leftSection={<IconDeviceFloppy size={16} />} onClick={() => void save()} loading={busy} disabled={readOnly || (!!base && !dirty)}>
                {base ? "Save" : "Create"}
              </Button>
            </span>
          </Tooltip>
        </Group>
      </Group>

      {remote && (
        <Alert color="orange" title={`Changed by ${remote.updatedBy ?? "someone"} just now`} styles={warnStyles}>
          <Group justify="space-between" gap="xs">
            <Text size="sm">
              Someone saved this item ({show(remote.updatedAt, zone)}) while you were editing. Compare to keep your changes and take theirs.
            </Text>
            <Button size="xs" variant="white" color="dark" onClick={() => setConflict({ theirs: remote, mode: "merge" })}>
              Compare
            </Button>
          </Group>
        </Alert>
      )}
      {readOnly && (
        <Alert color="gray" variant="light">
          {deleted
            ? "This item is deleted: restore it to edit it."
            : "You may read this item but not change it: the fields are read-only."}
        </Alert>
      )}

      <Grid gap="md">
        <Grid.Col span={{ base: 12, md: base ? 8 : 12 }}>
          <Paper withBorder p="md" component="form" aria-label="Item" onSubmit={(e) => (e.preventDefault(), void save())}>
            <Stack gap="md">
              <Group align="flex-start" gap="lg" wrap="wrap">
                <ZonePicker zone={zone} onChange={setZone} />
                {localized.length > 0 && (
                  <LocalesPicker locales={locales} held={held} readOnly={readOnly} onChange={(l) => setExtraLocales(l.filter((x) => !held.includes(x)))} />
                )}
              </Group>
              <div data-key="name">
                <TextInput
                  id={inputId("name")}
                  label="Name"
                  description="The item's title in lists and searches"
                  withAsterisk
                  value={draft.name}
                  onChange={(e) => change("name", { ...draft, name: e.currentTarget.value })}
                  error={errorAt("name")}
                  readOnly={readOnly}
                />
              </div>
              {fields.map((f) => {
                const key = `values.${f.name}`;
                return (
                  <div key={f.id || f.name} data-key={key}>
                    <FieldInput
                      field={f}
                      id={inputId(key)}
                      label={f.name}
                      description={f.description || undefined}
                      required={f.required}
                      value={draft.values[f.name]}
                      onChange={(v) => change(key, { ...draft, values: { ...draft.values, [f.name]: v } })}
                      onInvalid={(m) => setWidgetErrors((w) => (w[key] === m ? w : m ? { ...w, [key]: m } : (({ [key]: _, ...r }) => r)(w)))}
                      error={errorAt(key)}
                      readOnly={readOnly}
                      zone={zone}
                      appId={appId}
                      appModules={appModules}
                      locales={locales}
                    />
                  </div>
                );
              })}
              {withTags && (
                <div data-key="tags">
                  <TagsField module={module} tags={draft.tags} readOnly={readOnly} error={errorAt("tags")} onChange={(tags) => change("tags", { ...draft, tags })} />
                </div>
              )}
            </Stack>
          </Paper>
        </Grid.Col>
        {base && (
          <Grid.Col span={{ base: 12, md: 4 }}>
            <PublishPanel item={base} zone={zone} appId={appId} mayUpdate={mayUpdate} mayDelete={mayDelete} onChanged={onChanged} onConflict={onConflict} onBusy={setCommanding} />
          </Grid.Col>
        )}
      </Grid>

      {conflict && base && (
        <ConflictDialog
          module={module}
          base={baseDraft}
          mine={draft}
          theirs={conflict.theirs}
          parts={parts}
          zone={zone}
          appModules={appModules}
          mode={conflict.mode}
          onCancel={() => setConflict(undefined)}
          onResolve={(merged) => {
            const theirs = conflict.theirs;
            setConflict(undefined);
            adopt(theirs);
            setDraft(merged);
            if (conflict.mode === "save") void save(merged, theirs);
          }}
        />
      )}
    </Stack>
  );
}

const tagKey = (t: Pick<Tag, "name" | "value">) => `${t.name}=${t.value}`;

/** TagsField: the item's tags, out of those its module allows. */
function TagsField(p: { module: Module; tags: Tag[]; readOnly: boolean; error?: string; onChange: (t: Tag[]) => void }) {
  const all = [...p.module.tags, ...p.tags.filter((t) => !p.module.tags.some((m) => tagKey(m) === tagKey(t)))];
  return (
    <MultiSelect
      id={inputId("tags")}
      label="Tags"
      description="The item's segmentation tags (those its module allows)"
      data={all.map((t) => ({ value: tagKey(t), label: tagKey(t) }))}
      value={p.tags.map(tagKey)}
      onChange={(v) => p.onChange(all.filter((t) => v.includes(tagKey(t))))}
      readOnly={p.readOnly}
      error={p.error}
      searchable
      clearable={!p.readOnly}
    />
  );
}
