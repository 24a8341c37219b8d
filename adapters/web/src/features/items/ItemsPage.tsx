// The items of a module: state filter, quick search, filter builder, sort,
// column choice, server-side pagination, multi-select with bulk actions,
// and "Preview as the app". The whole view is in the URL's query string.
import { Alert, Anchor, Badge, Breadcrumbs, Button, Group, ScrollArea, SegmentedControl, Select, Stack, Text, TextInput, Title, Tooltip } from "@mantine/core";
import { useDebouncedValue, useMediaQuery } from "@mantine/hooks";
import { IconFilter, IconPlus, IconSearch } from "@tabler/icons-react";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import type { Schemas } from "../../api/client";
import { describe } from "../../lib/errors";
import { useRights } from "../access/hooks";
import { can, whyNot } from "../access/rights";
import { PageLoader } from "../shell/PageLoader";
import { PageNav } from "../shell/PageNav";
import { BulkBar } from "./list/BulkBar";
import { ColumnMenu } from "./list/ColumnMenu";
import { defaultColumns, useColumns, valueFields } from "./list/columns";
import { countConditions, decodeFilter, encodeFilter } from "./list/filter";
import { FilterBuilder } from "./list/FilterBuilder";
import { stateLabels } from "./list/itemState";
import { ItemsTable } from "./list/ItemsTable";
import { pageSizes, previewMoment, stateChoices, useListParams } from "./list/listParams";
import { PreviewBanner, PreviewSwitch } from "./list/PreviewControl";
import { propsOf } from "./list/props";
import { useModule } from "../modules/api";
import { itemsPageQuery, useItemsPage } from "./list/queries";

type Item = Schemas["Instance"];

export function ItemsPage() {
  const { appId = "", moduleId = "" } = useParams();
  const navigate = useNavigate();
  const module = useModule(moduleId);
  const props = useMemo(() => propsOf(module.data), [module.data]);
  const byKey = useMemo(() => new Map(props.map((p) => [p.key, p])), [props]);
  const [params, setParams] = useListParams();
  const [columns, setColumns] = useColumns(moduleId, props);
  const fields = valueFields(columns);
  const page = useItemsPage(moduleId, params, byKey, fields, module.isSuccess);
  const queryClient = useQueryClient();
  // A change of view asks for its page at once, while React renders the
  // change (the router's update is a transition): the rows come sooner.
  const update: typeof setParams = (change, opts) => {
    if (module.isSuccess) {
      const next = { ...params, ...change, page: change.page ?? 1 };
      void queryClient.prefetchQuery(itemsPageQuery(moduleId, next, byKey, fields)).catch(() => {});
    }
    setParams(change, opts);
  };
  const rights = useRights();
  const [filterOpen, setFilterOpen] = useState(false);
  const [selected, setSelected] = useState<Map<string, Item>>(new Map());
  const wide = useMediaQuery("(min-width: 1100px)", true, { getInitialValueInEffect: false });

  // Quick search: typed here, in the URL once it has 3 characters (or none).
  const [q, setQ] = useState(params.q);
  const [debounced] = useDebouncedValue(q.trim(), 300);
  useEffect(() => {
    if ((debounced.length >= 3 || debounced.length === 0) && debounced !== params.q) update({ q: debounced }, { replace: true });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [debounced]);
  useEffect(() => {
    if (params.q !== q.trim() && (params.q.length > 0 || q.trim().length >= 3)) setQ(params.q);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [params.q]);

  // A different list is a different selection.
  const listKey = `${moduleId}|${params.state}|${params.q}|${params.filter}|${params.preview}`;
  useEffect(() => setSelected(new Map()), [listKey]);

  // Past the last page (items deleted meanwhile): go to the last one.
  const lastPage = page.data ? Math.max(1, Math.ceil(page.data.total / params.size)) : 1;
  useEffect(() => {
    if (page.data && !page.isPlaceholderData && params.page > lastPage) setParams({ page: lastPage }, { replace: true });
  }, [page.data, page.isPlaceholderData, params.page, lastPage, setParams]);

  if (module.isPending) return <PageLoader label="Loading the module" />;
  if (module.isError) {
    return (
      <Alert color="red" title="The module cannot be shown">
        {describe(module.error)}
      </Alert>
    );
  }

  const scope = { app: appId, module: moduleId };
  const canWrite = can(rights, "write", scope);
  const items = page.data?.items ?? [];
  const total = page.data?.total ?? 0;
  const chosen = [...selected.values()];
  const canUpdate = chosen.every((i) => can(rights, "update", { ...scope, item: i.id }));
  const canDelete = chosen.every((i) => can(rights, "delete", { ...scope, item: i.id }));
  const filter = decodeFilter(params.filter);
  const conditions = countConditions(filter, byKey);
  const previewing = params.preview !== null;
  const filtered = params.state !== "all" || params.q !== "" || conditions > 0;
  const first = total === 0 ? 0 : (params.page - 1) * params.size + 1;
  const last = Math.min(total, params.page * params.size);
  const pages = Math.max(1, Math.ceil(total / params.size));

  const select = (list: Item[], on: boolean) =>
    setSelected((prev) => {
      const next = new Map(prev);
      for (const i of list) {
        if (on) next.set(i.id, i);
        else next.delete(i.id);
      }
      return next;
    });

  return (
    <Stack gap="sm">
      <Breadcrumbs>
        <Anchor component={Link} to={`/apps/${appId}/modules`} size="sm">
          Content
        </Anchor>
        <Text size="sm">{module.data.name}</Text>
      </Breadcrumbs>
      <Group justify="space-between" align="center" wrap="wrap">
        <Group gap="xs" align="baseline">
          <Title order={2}>{module.data.name}</Title>
          <Text c="dimmed" size="sm">
            {page.data ? `${total.toLocaleString()} item${total === 1 ? "" : "s"}${filtered || previewing ? " shown" : ""}` : ""}
          </Text>
        </Group>
        <Group gap="xs">
          <Button component={Link} to={`/apps/${appId}/modules/${moduleId}/structure`} variant="subtle">
            Structure
          </Button>
          <Tooltip label={whyNot("write", scope)} disabled={canWrite} multiline w={260}>
            <Button
              leftSection={<IconPlus size={16} aria-hidden />}
              disabled={!canWrite}
              style={!canWrite ? { pointerEvents: "auto" } : undefined}
              onClick={() => navigate(`/apps/${appId}/modules/${moduleId}/items/new`)}
            >
              New item
            </Button>
          </Tooltip>
        </Group>
      </Group>

      {!previewing && (
        <ScrollArea type="auto" scrollbarSize={6}>
          <SegmentedControl
            aria-label="State"
            transitionDuration={0}
            size={wide ? "sm" : "xs"}
            value={params.state}
            onChange={(v) => update({ state: v as typeof params.state })}
            data={stateChoices.map((s) => ({ value: s, label: s === "all" ? "All" : stateLabels[s] }))}
          />
        </ScrollArea>
      )}

      <Group gap="xs" wrap="wrap">
        <TextInput
          aria-label="Search by name"
          placeholder="Search by name"
          leftSection={<IconSearch size={16} aria-hidden />}
          value={q}
          onChange={(e) => setQ(e.currentTarget.value)}
          w={300}
          description={q.trim().length > 0 && q.trim().length < 3 ? "Type at least 3 characters" : undefined}
          inputWrapperOrder={["label", "input", "description"]}
        />
        <Button
          variant={filterOpen || conditions > 0 ? "light" : "default"}
          leftSection={<IconFilter size={16} aria-hidden />}
          rightSection={conditions > 0 ? <Badge size="sm" circle>{conditions}</Badge> : undefined}
          onClick={() => setFilterOpen((o) => !o)}
          aria-expanded={filterOpen}
        >
          Filter
        </Button>
        <ColumnMenu props={props} shown={columns} onChange={setColumns} onReset={() => setColumns(defaultColumns(props))} />
        <PreviewSwitch preview={params.preview} onChange={(preview) => update({ preview })} allowed={can(rights, "read", scope)} />
      </Group>

      {filterOpen && (
        <FilterBuilder
          key={params.filter}
          props={props}
          value={filter}
          onApply={(g) => update({ filter: encodeFilter(g) })}
          onClose={() => setFilterOpen(false)}
        />
      )}

      {previewing && <PreviewBanner at={params.preview === "now" ? null : previewMoment(params.preview)} onLeave={() => update({ preview: null })} />}

      {selected.size > 0 && (
        <BulkBar
          appId={appId}
          moduleId={moduleId}
          selected={selected}
          canUpdate={canUpdate}
          canDelete={canDelete}
          onDone={(keep) => setSelected((prev) => new Map([...prev].filter(([id]) => keep.includes(id))))}
        />
      )}

      {page.isError && (
        <Alert color="red" title="The items cannot be listed">
          {describe(page.error)}
        </Alert>
      )}
      {page.isPending && !page.isError && <PageLoader label="Loading items" />}
      {page.data && (
        <div style={{ opacity: page.isPlaceholderData ? 0.6 : 1 }} aria-busy={page.isFetching}>
          <ItemsTable
            appId={appId}
            items={items}
            at={page.data.at}
            columns={columns}
            byKey={byKey}
            sort={params.sort}
            onSort={(sort) => update({ sort })}
            selected={selected}
            onSelect={select}
          />
          {items.length === 0 && (
            <Stack align="center" gap="xs" py="xl">
              <Text>{filtered || previewing ? "No items match." : "This module has no items yet."}</Text>
              {filtered && !previewing && (
                <Button variant="light" onClick={() => update({ state: "all", q: "", filter: "" })}>
                  Clear filters
                </Button>
              )}
            </Stack>
          )}
        </div>
      )}

      {page.data && total > 0 && (
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Group gap="xs">
            <Text size="sm" aria-live="polite">
              {first.toLocaleString()}–{last.toLocaleString()} of {total.toLocaleString()}
            </Text>
            <Select
              aria-label="Items per page"
              data={pageSizes.map((n) => ({ value: String(n), label: `${n} per page` }))}
              value={String(params.size)}
              onChange={(v) => v && update({ size: Number(v) })}
              w={130}
              size="xs"
              allowDeselect={false}
            />
          </Group>
          <PageNav total={pages} value={Math.min(params.page, pages)} onChange={(n) => update({ page: n })} size="sm" withEdges />
        </Group>
      )}
    </Stack>
  );
}
