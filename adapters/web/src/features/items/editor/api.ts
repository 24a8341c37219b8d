// The item editor's API calls. Every write names the revision the editor
// read as `If-Match: "<revision>"` (the item's ETag is that revision). A
// stale one is refused with the current item (412 with `extra.current`;
// a HALO-style body `revision` gets a 409 with the item as `extra`, also
// understood), and the editor lets the user merge.
import { useQuery } from "@tanstack/react-query";
import { api } from "../../../api/client";
import { ApiError, unwrap } from "../../../lib/errors";
import type { Item } from "./model";

export { useModule } from "../../modules/api";

export function useItem(itemId: string | undefined) {
  return useQuery({
    queryKey: ["item", itemId],
    queryFn: async () => unwrap(await api.GET("/api/generalcontent/instance/{id}", { params: { path: { id: itemId! } } })),
    enabled: !!itemId,
  });
}

const ifMatch = (revision: number) => ({ "If-Match": `"${revision}"` });
const on = (item: { id: string; revision: number }) => ({ path: { id: item.id }, header: ifMatch(item.revision) });

/** conflictOf: the current item a refused write carries, when it was refused for a stale revision. */
export function conflictOf(err: unknown): Item | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const x = err.extra as Record<string, unknown>;
  if (err.status === 412 && x.current && typeof x.current === "object") return x.current as Item;
  if (err.status === 409 && typeof x.id === "string" && typeof x.revision === "number" && "values" in x) return x as unknown as Item;
  return undefined;
}

export interface Content {
  name: string;
  values: Record<string, unknown>;
  tags: { name: string; value: string; tagType?: string; id?: string }[];
}

export async function createItem(module: string, c: Content): Promise<Item> {
  return unwrap(await api.POST("/api/generalcontent/instance", { body: { module, ...c } }));
}

/** Dates a PUT sets along with the content (a HALO PUT replaces both). */
export interface Dates {
  publishedAt: number | null;
  removedAt: number | null;
  archivedAt: number | null;
}

export async function saveItem(base: Item, c: Content, dates: Dates = base): Promise<Item> {
  return unwrap(
    await api.PUT("/api/generalcontent/instance/{id}", {
      params: on(base),
      body: { ...c, externalId: base.externalId, publishedAt: dates.publishedAt, removedAt: dates.removedAt, archivedAt: dates.archivedAt },
    }),
  );
}

export type Transition = "publish" | "unpublish" | "archive" | "unarchive" | "restore";

export async function transition(base: Item, what: Transition, at?: number): Promise<Item> {
  const id = { params: on(base) };
  switch (what) {
    case "publish":
      return unwrap(
        await api.POST("/api/generalcontent/instance/{id}/publish", { ...id, body: at ? { publishedAt: at } : {} }),
      );
    case "archive":
      return unwrap(
        await api.POST("/api/generalcontent/instance/{id}/archive", { ...id, body: at ? { archivedAt: at } : {} }),
      );
    case "unpublish":
      return unwrap(await api.POST("/api/generalcontent/instance/{id}/unpublish", { ...id, body: {} }));
    case "unarchive":
      return unwrap(await api.POST("/api/generalcontent/instance/{id}/unarchive", { ...id, body: {} }));
    case "restore":
      return unwrap(await api.POST("/api/generalcontent/instance/{id}/restore", { ...id, body: {} }));
  }
}

export async function deleteItem(base: Item): Promise<Item> {
  return unwrap(
    await api.DELETE("/api/generalcontent/instance/{id}", {
      params: on(base),
    }),
  );
}

/** setExpiry: an expiry date is set by a PUT of the item as it is, with removedAt. */
export async function setExpiry(base: Item, removedAt: number | null): Promise<Item> {
  return saveItem(base, { name: base.name, values: base.values, tags: base.tags }, { ...base, removedAt });
}

export function useHistory(itemId: string | undefined) {
  return useQuery({
    queryKey: ["history", itemId],
    queryFn: async () => unwrap(await api.GET("/api/generalcontent/instance/{id}/history", { params: { path: { id: itemId! } } })),
    enabled: !!itemId,
  });
}

export async function restoreRevision(itemId: string, revision: number, current: number): Promise<Item> {
  return unwrap(
    await api.POST("/api/generalcontent/instance/{id}/history/{revision}/restore", {
      params: { path: { id: itemId, revision }, header: ifMatch(current) },
      body: {},
    }),
  );
}

export interface Found {
  id: string;
  name: string;
  module: string;
}

/**
 * searchItems finds items of modules by name (a "like" filter needs 3
 * characters; shorter queries list the first items by name), or the items
 * of the given ids (to name the chosen ones).
 */
export async function searchItems(q: { modules: string[]; text?: string; ids?: string[]; limit?: number }): Promise<Found[]> {
  const text = q.text?.trim() ?? "";
  const res = unwrap(
    await api.POST("/api/generalcontent/instance/search", {
      body: {
        moduleIds: q.modules,
        ...(q.ids ? { instanceIds: q.ids } : {}),
        ...(text.length >= 3 ? { metaSearch: { operation: "like", property: "name", value: text, type: "string" } } : {}),
        sort: "name asc",
        segmentMode: "partial",
        pagination: { page: 1, limit: q.limit ?? 20, skip: false },
      },
    }),
  );
  const items = Array.isArray(res) ? res : res.items;
  const found = items.map((i) => ({ id: i.id, name: i.name, module: i.module }));
  if (text && text.length < 3) return found.filter((f) => f.name.toLowerCase().includes(text.toLowerCase()));
  return found;
}
