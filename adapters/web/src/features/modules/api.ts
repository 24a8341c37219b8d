// The modules feature's server state: the modules of an app, one module
// with its fields, and the writes. Query keys start with ["modules", app]
// and ["module", id] so the live stream's invalidations reach them.
import { queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas } from "../../api/client";
import { unwrap } from "../../lib/errors";

/** fetchModule reads one module with its fields. */
export async function fetchModule(id: string) {
  return unwrap(await api.GET("/api/generalcontent/module/{id}", { params: { path: { id } } }));
}

// A module as the client reads it (openapi-fetch leaves out the keys
// that are always null).
export type Module = Awaited<ReturnType<typeof fetchModule>>;
export type ModuleField = NonNullable<Module["fields"]>[number];
export type ModuleBody = Schemas["ModuleBody"];

export const modulesKey = (app: string) => ["modules", app] as const;
export const moduleKey = (id: string) => ["module", id] as const;

/**
 * useModules: every module of the app the user may see, with fields (so
 * the list can count them and the relation picker can name targets).
 * The key extends ["modules", app] so an invalidation of it reaches this.
 */
export function useModules(app: string | undefined) {
  return useQuery({
    queryKey: [...modulesKey(app ?? ""), "all"],
    queryFn: async () => {
      const data = unwrap(
        await api.GET("/api/generalcontent/module", {
          params: { query: { app: app!, skip: true, withFields: true } },
        }),
      );
      // skip=true answers a bare array.
      return Array.isArray(data) ? data : data.items;
    },
    enabled: !!app,
  });
}

/** moduleQuery: one module with its fields, the query every screen shares (lists, editors, prefetch). */
export function moduleQuery(id: string) {
  // Fresh for a few seconds (a prefetched module is not asked for again
  // when its screen mounts); the live stream invalidates it on a change.
  return queryOptions({ queryKey: moduleKey(id), queryFn: () => fetchModule(id), staleTime: 5_000 });
}

export function useModule(id: string | undefined) {
  return useQuery({ ...moduleQuery(id ?? ""), enabled: !!id });
}

/** bodyOf turns a module as read into the body that replaces it. */
export function bodyOf(m: Module): ModuleBody {
  return {
    name: m.name,
    isSingle: m.isSingle,
    tags: m.tags.map((t) => ({ id: t.id || undefined, name: t.name, value: t.value, tagType: t.tagType || undefined })),
    fields: (m.fields ?? []).map((f) => ({
      id: f.id,
      name: f.name,
      description: f.description,
      type: f.type,
      required: f.required,
      localized: f.localized,
      rules: f.rules,
    })),
  };
}

function useSettle(app: string) {
  const qc = useQueryClient();
  return (m?: Module) => {
    if (m) qc.setQueryData(moduleKey(m.id), m);
    return qc.invalidateQueries({ queryKey: modulesKey(app) });
  };
}

export function useCreateModule(app: string) {
  const settle = useSettle(app);
  return useMutation({
    mutationFn: async (body: { name: string; isSingle: boolean; moduleType?: string; fields?: Schemas["ModuleFieldBody"][] }) =>
      unwrap(await api.POST("/api/generalcontent/module", { body: { app, ...body } })),
    onSuccess: (m) => settle(m),
  });
}

export function useUpdateModule(app: string) {
  const settle = useSettle(app);
  return useMutation({
    mutationFn: async ({ id, body }: { id: string; body: ModuleBody }) =>
      unwrap(await api.PUT("/api/generalcontent/module/{id}", { params: { path: { id } }, body })),
    onSuccess: (m) => settle(m),
  });
}

export function useDeleteModule(app: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      unwrap(await api.DELETE("/api/generalcontent/module/{id}", { params: { path: { id } } }));
      return id;
    },
    onSuccess: (id) => {
      qc.removeQueries({ queryKey: moduleKey(id) });
      qc.invalidateQueries({ queryKey: ["items", id] });
      return qc.invalidateQueries({ queryKey: modulesKey(app) });
    },
  });
}
