// The list's server state: the module (its fields), a page of its items
// (server-side paging: never more than one page is fetched, so a module
// of 100k items lists as fast as one of ten), and the bulk actions.
import { keepPreviousData, queryOptions, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas } from "../../../api/client";
import { ApiError, describe, unwrap } from "../../../lib/errors";
import { compile, decodeFilter } from "./filter";
import { stateFilter } from "./itemState";
import { previewMoment, type ListParams } from "./listParams";
import type { Prop } from "./props";

type Expression = Schemas["Expression"];

function and(list: (Expression | undefined)[]): Expression | undefined {
  const ops = list.filter((e): e is Expression => e !== undefined);
  return ops.length === 0 ? undefined : ops.length === 1 ? ops[0] : { condition: "and", operands: ops };
}

/**
 * searchBody builds the search for a list's view at `now`: the state's
 * dates are judged then. Throws FilterError for a filter HALO's syntax
 * cannot say.
 */
export function searchBody(moduleId: string, p: ListParams, props: Map<string, Prop>, fields: string[], now: number) {
  const trees = compile(decodeFilter(p.filter), props);
  const at = previewMoment(p.preview, now);
  const q = p.q.trim();
  const metaSearch = and([
    at === null && p.state !== "all" ? stateFilter(p.state, now) : undefined,
    q.length >= 3 ? { operation: "like", property: "name", value: q, type: "string" } : undefined,
    trees.metaSearch,
  ]);
  const body: Schemas["SearchQuery"] = {
    moduleIds: [moduleId],
    segmentMode: "partial",
    sort: p.sort,
    pagination: { page: p.page, limit: p.size, skip: false },
    // Only the values the columns show: a page stays small however big
    // the items are. (An empty list would mean every value.)
    fields: fields.length > 0 ? fields : ["\u0001none"],
  };
  if (metaSearch) body.metaSearch = metaSearch;
  if (trees.searchValues) body.searchValues = trees.searchValues;
  if (at !== null) body.previewAt = at;
  return body;
}

export interface ItemsPage {
  items: Schemas["Instance"][];
  total: number;
  /** The moment the states were judged at (the preview's, or the fetch's). */
  at: number;
}

/** itemsPageQuery: the query of one page of a module's items (useItemsPage, and the prefetch of a view about to be shown). */
export function itemsPageQuery(moduleId: string, p: ListParams, props: Map<string, Prop>, fields: string[]) {
  return queryOptions({
    // Every list of a module's items starts with ["items", moduleId], so
    // the live updates (and our own writes) invalidate them all.
    queryKey: ["items", moduleId, "list", p, fields],
    staleTime: 5_000, // as the module's: live changes invalidate it
    queryFn: async ({ signal }): Promise<ItemsPage> => {
      const now = Date.now();
      const body = searchBody(moduleId, p, props, fields, now);
      const res = unwrap(
        await api.POST("/api/generalcontent/instance/search", { body, signal }),
      ) as Schemas["SearchPage"];
      return { items: res.items, total: res.pagination.totalItems, at: previewMoment(p.preview, now) ?? now };
    },
  });
}

export function useItemsPage(moduleId: string, p: ListParams, props: Map<string, Prop>, fields: string[], ready: boolean) {
  return useQuery({ ...itemsPageQuery(moduleId, p, props, fields), enabled: ready, placeholderData: keepPreviousData });
}

export interface Outcome {
  ok: string[];
  failed: { id: string; message: string }[];
}

async function pool<T>(list: T[], width: number, run: (t: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < list.length) await run(list[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(width, list.length) }, worker));
}

/** useBulk: publish, unpublish (one call per item, four at a time) and delete (one batch). */
export function useBulk(moduleId: string) {
  const qc = useQueryClient();
  const done = async (ids: string[]) => {
    await qc.invalidateQueries({ queryKey: ["items", moduleId] });
    for (const id of ids) void qc.invalidateQueries({ queryKey: ["item", id] });
  };

  const transition = async (ids: string[], action: "publish" | "unpublish"): Promise<Outcome> => {
    const out: Outcome = { ok: [], failed: [] };
    await pool(ids, 4, async (id) => {
      try {
        const path = action === "publish" ? "/api/generalcontent/instance/{id}/publish" : "/api/generalcontent/instance/{id}/unpublish";
        unwrap(await api.POST(path, { params: { path: { id } }, body: {} }));
        out.ok.push(id);
      } catch (err) {
        out.failed.push({ id, message: describe(err) });
      }
    });
    await done(ids);
    return out;
  };

  const remove = async (ids: string[]): Promise<Outcome> => {
    const out: Outcome = { ok: [], failed: [] };
    try {
      const res = unwrap(await api.POST("/api/generalcontent/instance/batch", { body: { deleted: ids.map((id) => ({ id })) } }));
      for (const op of res.operations) {
        const id = ids[op.position];
        if (op.success) out.ok.push(id);
        else {
          const e = (op.data as Schemas["HaloError"]).error;
          out.failed.push({ id, message: describe(new ApiError(e.status, e.message, e.extra ?? {})) });
        }
      }
    } catch (err) {
      const message = describe(err);
      for (const id of ids) out.failed.push({ id, message });
    }
    await done(ids);
    return out;
  };

  return { publish: (ids: string[]) => transition(ids, "publish"), unpublish: (ids: string[]) => transition(ids, "unpublish"), remove };
}
