// Module types: reusable field sets (GET for every CMS user; writes,
// import included, for administrators).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, type Schemas } from "../../api/client";
import { unwrap } from "../../lib/errors";
import type { ModuleField } from "../modules/api";

export type ModuleTypeDocument = Schemas["ModuleTypeDocument"];

export const moduleTypesKey = ["moduleTypes"] as const;

async function fetchModuleTypes() {
  return unwrap(await api.GET("/api/core/moduletype"));
}

/** A module type as the client reads it (always-null keys left out). */
export type ModuleType = Awaited<ReturnType<typeof fetchModuleTypes>>[number];

export function useModuleTypes(enabled = true) {
  return useQuery({ queryKey: moduleTypesKey, queryFn: fetchModuleTypes, enabled });
}

export function useCreateModuleType() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (body: Schemas["ModuleTypeBody"]) => unwrap(await api.POST("/api/core/moduletype", { body })),
    onSuccess: () => qc.invalidateQueries({ queryKey: moduleTypesKey }),
  });
}

export function useDeleteModuleType() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      unwrap(await api.DELETE("/api/core/moduletype/{id}", { params: { path: { id } } }));
    },
    onSuccess: () => qc.invalidateQueries({ queryKey: moduleTypesKey }),
  });
}

export function useImportModuleTypes() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (doc: ModuleTypeDocument) => unwrap(await api.POST("/api/core/moduletype/import", { body: doc })),
    onSuccess: () => qc.invalidateQueries({ queryKey: moduleTypesKey }),
  });
}

/** download fetches the import document of one module type, or of all. */
export async function download(id?: string): Promise<{ doc: ModuleTypeDocument; filename: string }> {
  const doc = id
    ? unwrap(await api.GET("/api/core/moduletype/download/{id}", { params: { path: { id } } }))
    : unwrap(await api.GET("/api/core/moduletype/download"));
  return { doc, filename: id ? `moduletype-${id}.json` : "moduletypes.json" };
}

/** saveFile hands a JSON document to the browser as a download. */
export function saveFile(filename: string, doc: unknown) {
  const blob = new Blob([JSON.stringify(doc, null, 2) + "\n"], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * fieldsForType copies a module's fields into a module type's body. A
 * relation's target module is left out: it is a module of one app, and a
 * module type serves every app.
 */
export function fieldsForType(fields: ModuleField[]): Schemas["ModuleFieldBody"][] {
  return fields.map((f) => {
    const { module: _target, ...rules } = f.rules;
    return {
      name: f.name,
      description: f.description,
      type: f.type,
      required: f.required,
      localized: f.localized,
      rules,
    };
  });
}
