// An app's media library through the API (/api/media/...): the paged,
// filtered list, the folders and tags with their counts, one file with
// what uses it, and the changes (describe, delete). Uploads and
// replacements go through upload.ts, which reports progress.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas } from "../../api/client";
import { unwrap } from "../../lib/errors";

export type MediaFile = Schemas["MediaFile"];
export type MediaKind = Schemas["MediaKind"];
export type MediaUse = Schemas["MediaUse"];
export type MediaChange = Schemas["MediaFileChange"];
export type MediaSort = "uploaded_desc" | "uploaded_asc" | "name_asc" | "name_desc" | "size_desc" | "size_asc";

/** What a list shows: the filters, sort and page of the library. */
export interface MediaQuery {
  q: string;
  kind: MediaKind | null;
  tags: string[];
  /** null: every folder; "": the top level only. */
  folder: string | null;
  uploadedBy: string;
  sort: MediaSort;
  page: number;
  limit: number;
}

/** The query keys: every list of an app, its facets, one file. */
export const mediaKeys = {
  lists: (app: string) => ["media", app] as const,
  list: (app: string, q: MediaQuery) => ["media", app, q] as const,
  facets: (app: string) => ["mediaFacets", app] as const,
  file: (id: string) => ["mediaFile", id] as const,
};

/** useMediaList reads one page of the app's files. */
export function useMediaList(app: string, q: MediaQuery, enabled = true) {
  return useQuery({
    queryKey: mediaKeys.list(app, q),
    queryFn: async () =>
      unwrap(
        await api.GET("/api/media/file", {
          params: {
            query: {
              app,
              q: q.q || undefined,
              kind: q.kind ?? undefined,
              tag: q.tags.length ? q.tags : undefined,
              folder: q.folder ?? undefined,
              uploadedBy: q.uploadedBy || undefined,
              sort: q.sort,
              page: q.page,
              limit: q.limit,
            },
          },
        }),
      ),
    enabled,
    placeholderData: keepPreviousData,
  });
}

/** useMediaFacets reads the app's folders, tags and kinds with their counts. */
export function useMediaFacets(app: string, enabled = true) {
  return useQuery({
    queryKey: mediaKeys.facets(app),
    queryFn: async () => unwrap(await api.GET("/api/media/facets", { params: { query: { app } } })),
    enabled,
    staleTime: 10_000,
  });
}

/** useMediaFile reads one file, with `usedIn`. */
export function useMediaFile(id: string | null) {
  return useQuery({
    queryKey: mediaKeys.file(id ?? ""),
    queryFn: async () => unwrap(await api.GET("/api/media/file/{id}", { params: { path: { id: id! } } })),
    enabled: !!id,
  });
}

/** useMediaChanged: what to call once a file of app was added, changed or deleted. */
export function useMediaChanged(app: string) {
  const qc = useQueryClient();
  return (file?: MediaFile) => {
    if (file) qc.setQueryData(mediaKeys.file(file.id), (old: MediaFile | undefined) => ({ ...old, ...file }));
    void qc.invalidateQueries({ queryKey: mediaKeys.lists(app) });
    void qc.invalidateQueries({ queryKey: mediaKeys.facets(app) });
    if (file) void qc.invalidateQueries({ queryKey: mediaKeys.file(file.id) });
  };
}

/** useUpdateMedia changes a file's name, folder, tags, alt texts or captions. */
export function useUpdateMedia(app: string, id: string) {
  const changed = useMediaChanged(app);
  return useMutation({
    mutationFn: async (change: MediaChange) =>
      unwrap(await api.PATCH("/api/media/file/{id}", { params: { path: { id } }, body: change })),
    onSuccess: (f) => changed(f),
  });
}

/** useDeleteMedia deletes a file; force deletes it even while it is used (else a 409 names the uses). */
export function useDeleteMedia(app: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, force }: { id: string; force: boolean }) => {
      unwrap(await api.DELETE("/api/media/file/{id}", { params: { path: { id }, query: { force: force || undefined } } }));
      return id;
    },
    onSuccess: (id) => {
      qc.removeQueries({ queryKey: mediaKeys.file(id) });
      void qc.invalidateQueries({ queryKey: mediaKeys.lists(app) });
      void qc.invalidateQueries({ queryKey: mediaKeys.facets(app) });
    },
  });
}

/** useTransformURL: the signed address of file's image derived by t (any transform the server allows). */
export function useTransformURL(id: string, t: { w?: number; h?: number; fit?: string; fm?: string }) {
  const query = Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined && v !== "")) as {
    w?: number;
    h?: number;
    fit?: "cover" | "contain" | "fill" | "inside";
    fm?: "jpeg" | "png" | "webp" | "avif";
  };
  return useQuery({
    queryKey: [...mediaKeys.file(id), "transform", query],
    queryFn: async () => unwrap(await api.GET("/api/media/file/{id}/transform", { params: { path: { id }, query } })).url,
    staleTime: 60 * 60 * 1000,
  });
}
