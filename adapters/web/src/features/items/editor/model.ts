// The item editor's model: what the editor loaded (the base, at a
// revision), what the user changed (the draft), and how the two compare.
import type { Schemas } from "../../../api/client";

/** An item as read (the generated read type leaves out the constant null pushSchedule). */
export type Item = Omit<Schemas["Instance"], "pushSchedule">;
import type { Module, ModuleField as Field } from "../../modules/api";
export type { Module, Field };
export type Tag = Schemas["Tag"];

/** Draft is what the form holds: the item's content, not its dates. */
export interface Draft {
  name: string;
  values: Record<string, unknown>;
  tags: Tag[];
}

export function draftOf(item: Item | undefined, module: Module): Draft {
  const values: Record<string, unknown> = {};
  for (const f of module.fields ?? []) {
    const v = item ? item.values[f.name] : f.rules.default;
    values[f.name] = v === undefined ? null : v;
  }
  return { name: item?.name ?? "", values, tags: item?.tags ?? [] };
}

/** same compares two JSON values by content (object key order aside). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || a === null || b === undefined || b === null) return (a ?? null) === (b ?? null);
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => same(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!same(ao[k], bo[k])) return false;
  return true;
}

/** A part of an item the editor compares and merges: its name, a value, its tags. */
export type Part = { key: "name" } | { key: "tags" } | { key: "value"; field: Field };

export function partsOf(module: Module, withTags: boolean): Part[] {
  const parts: Part[] = [{ key: "name" }];
  for (const f of module.fields ?? []) parts.push({ key: "value", field: f });
  if (withTags) parts.push({ key: "tags" });
  return parts;
}

export function partId(p: Part): string {
  return p.key === "value" ? `values.${p.field.name}` : p.key;
}

export function partLabel(p: Part): string {
  return p.key === "value" ? p.field.name : p.key === "name" ? "Name" : "Tags";
}

export function get(d: Draft, p: Part): unknown {
  return p.key === "name" ? d.name : p.key === "tags" ? d.tags : d.values[p.field.name];
}

export function put(d: Draft, p: Part, v: unknown): Draft {
  if (p.key === "name") return { ...d, name: String(v ?? "") };
  if (p.key === "tags") return { ...d, tags: (v as Tag[]) ?? [] };
  return { ...d, values: { ...d.values, [p.field.name]: v } };
}

/** changedParts: the parts where a and b differ. */
export function changedParts(parts: Part[], a: Draft, b: Draft): Part[] {
  return parts.filter((p) => !same(get(a, p), get(b, p)));
}

/** The states an item can be in, from its dates at a moment (as the SDKs compute it). */
export type ItemState = "deleted" | "archived" | "expired" | "scheduled" | "published" | "concept";

export function stateOf(item: Pick<Item, "publishedAt" | "removedAt" | "archivedAt" | "deletedAt">, now = Date.now()): ItemState {
  if (item.deletedAt) return "deleted";
  if (item.archivedAt && item.archivedAt <= now) return "archived";
  if (item.removedAt && item.removedAt <= now) return "expired";
  if (item.publishedAt) return item.publishedAt > now ? "scheduled" : "published";
  return "concept";
}

export const stateLabel: Record<ItemState, string> = {
  deleted: "Deleted",
  archived: "Archived",
  expired: "Expired",
  scheduled: "Scheduled",
  published: "Published",
  concept: "Concept",
};

export const stateColor: Record<ItemState, string> = {
  deleted: "red.9",
  archived: "gray.8",
  expired: "#a34a00",
  scheduled: "blue.8",
  published: "green.9",
  concept: "#7a5c00",
};
