// The library's view lives in the URL's query string (search, kind, tags,
// folder, uploader, sort, page, page size, grid or list, the open file),
// so a reload or a shared link shows the same screen.
import { useCallback, useMemo } from "react";
import { useSearchParams } from "react-router";
import type { MediaKind, MediaQuery, MediaSort } from "./api";
import { kinds } from "./format";

export const sorts: { value: MediaSort; label: string }[] = [
  { value: "uploaded_desc", label: "Newest first" },
  { value: "uploaded_asc", label: "Oldest first" },
  { value: "name_asc", label: "Name, A to Z" },
  { value: "name_desc", label: "Name, Z to A" },
  { value: "size_desc", label: "Largest first" },
  { value: "size_asc", label: "Smallest first" },
];
export const pageSizes = [24, 48, 96];
const defaultSize = 24;

export type View = "grid" | "list";

export interface LibraryParams extends MediaQuery {
  view: View;
  /** The file whose details are open, or null. */
  file: string | null;
}

function positive(s: string | null, fallback: number): number {
  const n = Number(s);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** parseLibraryParams reads the library's view from its query string. */
export function parseLibraryParams(search: URLSearchParams): LibraryParams {
  const kind = search.get("kind");
  const sort = search.get("sort");
  const size = positive(search.get("size"), defaultSize);
  return {
    q: search.get("q") ?? "",
    kind: kinds.some((k) => k.value === kind) ? (kind as MediaKind) : null,
    tags: search.getAll("tag"),
    folder: search.get("folder"),
    uploadedBy: search.get("by") ?? "",
    sort: sorts.some((s) => s.value === sort) ? (sort as MediaSort) : "uploaded_desc",
    page: positive(search.get("page"), 1),
    limit: pageSizes.includes(size) ? size : defaultSize,
    view: search.get("view") === "list" ? "list" : "grid",
    file: search.get("file"),
  };
}

export type SetLibraryParams = (change: Partial<LibraryParams>, opts?: { replace?: boolean }) => void;

/** useLibraryParams: the view and how to change it (any change but the page, view or open file goes back to page 1). */
export function useLibraryParams(): [LibraryParams, SetLibraryParams] {
  const [search, setSearch] = useSearchParams();
  const params = useMemo(() => parseLibraryParams(search), [search]);
  const update = useCallback<SetLibraryParams>(
    (change, opts) => {
      setSearch(
        (prev) => {
          const next = new URLSearchParams(prev);
          const set = (k: string, v: string | null | undefined, dflt?: string) => {
            if (v === null || v === undefined || v === dflt) next.delete(k);
            else next.set(k, v);
          };
          if ("q" in change) set("q", change.q || null);
          if ("kind" in change) set("kind", change.kind);
          if ("tags" in change) {
            next.delete("tag");
            for (const t of change.tags ?? []) next.append("tag", t);
          }
          if ("folder" in change) set("folder", change.folder); // "" is a folder: the top level
          if ("uploadedBy" in change) set("by", change.uploadedBy || null);
          if ("sort" in change) set("sort", change.sort, "uploaded_desc");
          if ("limit" in change) set("size", String(change.limit), String(defaultSize));
          if ("view" in change) set("view", change.view, "grid");
          if ("file" in change) set("file", change.file);
          const keepsPage = Object.keys(change).every((k) => k === "page" || k === "view" || k === "file");
          if ("page" in change) set("page", String(change.page), "1");
          else if (!keepsPage) next.delete("page");
          return next;
        },
        { replace: opts?.replace },
      );
    },
    [setSearch],
  );
  return [params, update];
}
