// The list's view lives in the URL's query string (state, quick search,
// filter, sort, page, page size, preview), so a reload or a shared link
// shows the same list. Only view preferences (columns) go to
// localStorage, never anything secret.
import { useCallback, useMemo } from "react";
import { useSearchParams } from "react-router";
import type { ItemState } from "./itemState";

export type StateChoice = ItemState | "all";

export const stateChoices: StateChoice[] = ["all", "published", "concept", "scheduled", "expired", "archived", "deleted"];
export const pageSizes = [10, 20, 50, 100];
export const defaultSort = "createdAt desc";

export interface ListParams {
  state: StateChoice;
  /** Quick search on the name (3 characters or more). */
  q: string;
  /** The filter builder's filter, encoded (filter.ts). */
  filter: string;
  /** One sort key: "<key> asc|desc". */
  sort: string;
  page: number;
  size: number;
  /** Preview as the app: "now" or an epoch-ms moment; null when off. */
  preview: string | null;
}

function positive(s: string | null, fallback: number): number {
  const n = Number(s);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** parseListParams reads a list's view from its query string. */
export function parseListParams(search: URLSearchParams): ListParams {
  const state = search.get("state") as StateChoice | null;
  const size = positive(search.get("size"), 20);
  return {
    state: state && stateChoices.includes(state) ? state : "all",
    q: search.get("q") ?? "",
    filter: search.get("filter") ?? "",
    sort: search.get("sort") || defaultSort,
    page: positive(search.get("page"), 1),
    size: pageSizes.includes(size) ? size : 20,
    preview: search.get("preview"),
  };
}

export function useListParams(): [ListParams, (change: Partial<ListParams>, opts?: { replace?: boolean }) => void] {
  const [search, setSearch] = useSearchParams();
  const params = useMemo(() => parseListParams(search), [search]);

  const update = useCallback(
    (change: Partial<ListParams>, opts?: { replace?: boolean }) => {
      setSearch(
        (prev) => {
          const next = new URLSearchParams(prev);
          const set = (k: string, v: string | null | undefined, dflt?: string) => {
            if (v === null || v === undefined || v === "" || v === dflt) next.delete(k);
            else next.set(k, v);
          };
          if ("state" in change) set("state", change.state, "all");
          if ("q" in change) set("q", change.q);
          if ("filter" in change) set("filter", change.filter);
          if ("sort" in change) set("sort", change.sort, defaultSort);
          if ("size" in change) set("size", String(change.size), "20");
          if ("preview" in change) set("preview", change.preview);
          // Any change but the page itself starts again at page 1.
          set("page", "page" in change ? String(change.page) : null, "1");
          return next;
        },
        { replace: opts?.replace },
      );
    },
    [setSearch],
  );
  return [params, update];
}

/** previewMoment: the preview's moment in epoch ms, or null when off. */
export function previewMoment(preview: string | null, now = Date.now()): number | null {
  if (preview === null) return null;
  if (preview === "now") return now;
  const n = Number(preview);
  return Number.isFinite(n) ? n : now;
}

export function parseSort(sort: string): { key: string; dir: "asc" | "desc" } {
  const m = /^(.*?)(?:\s+(asc|desc))?$/i.exec(sort.trim());
  return { key: m?.[1] ?? "createdAt", dir: (m?.[2]?.toLowerCase() as "asc" | "desc") ?? "asc" };
}
