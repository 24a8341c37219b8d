// What an items list can show, filter and sort by: the item's attributes
// (name, dates, authors) and the module's fields. Keys are the search
// API's spelling: attributes by name ("createdAt"), fields as
// "values.<field>", so a key is also a sort key and a column key.
import { fieldType, kindOf } from "../../../lib/fieldTypes";

/** How a value is compared and typed in: decides operators and inputs. */
export type ValueKind = "text" | "number" | "date" | "boolean" | "choice" | "object";

/** What the list needs of a module field (the API's ModuleField has more). */
export interface FieldLike {
  name: string;
  type: string;
  localized: boolean;
  rules: { values?: string[] };
  format: { values?: string[] };
}

export interface Prop {
  key: string;
  label: string;
  /** An attribute (metaSearch) rather than a field (searchValues). */
  meta: boolean;
  kind: ValueKind;
  /** The search API sorts by it. */
  sortable: boolean;
  /** The options of a choice field. */
  options?: string[];
  /** Several values per item (multiple choice, relations, lists). */
  multi?: boolean;
  field?: FieldLike;
}

export const attributes: Prop[] = [
  { key: "name", label: "Name", meta: true, kind: "text", sortable: true },
  { key: "createdAt", label: "Created", meta: true, kind: "date", sortable: true },
  { key: "updatedAt", label: "Updated", meta: true, kind: "date", sortable: true },
  { key: "publishedAt", label: "Published at", meta: true, kind: "date", sortable: true },
  { key: "removedAt", label: "Expires at", meta: true, kind: "date", sortable: true },
  { key: "archivedAt", label: "Archived at", meta: true, kind: "date", sortable: true },
  { key: "createdBy", label: "Created by", meta: true, kind: "text", sortable: true },
  { key: "updatedBy", label: "Updated by", meta: true, kind: "text", sortable: true },
  { key: "externalId", label: "External id", meta: true, kind: "text", sortable: false },
  { key: "id", label: "Id", meta: true, kind: "text", sortable: false },
];

const longTypes = new Set([12, 13].map((n) => n.toString().padStart(24, "0"))); // Long text, Object

/** fieldProp describes a module field as a column, a filter and a sort key. */
export function fieldProp(f: FieldLike): Prop {
  const kind = kindOf(f);
  const multi = kind === "relations" || kind === "choices" || kind === "list";
  const base = { key: `values.${f.name}`, label: f.name, meta: false, field: f, multi };
  // Single-valued, indexed fields sort; localized text only with a locale.
  const sortable = !multi && kind !== "localized" && !longTypes.has(f.type);
  switch (kind) {
    case "number":
      return { ...base, kind: "number", sortable };
    case "timestamp":
      return { ...base, kind: "date", sortable };
    case "boolean":
      return { ...base, kind: "boolean", sortable };
    case "choice":
    case "choices":
      return { ...base, kind: "choice", sortable, options: (f.rules.values ?? f.format.values ?? []).map(String) };
    case "object":
      return { ...base, kind: "object", sortable: false };
    default:
      return { ...base, kind: "text", sortable };
  }
}

/** propsOf: the attributes, then the module's fields. */
export function propsOf(module: { fields?: FieldLike[] } | undefined): Prop[] {
  return [...attributes, ...(module?.fields ?? []).map(fieldProp)];
}

export function typeName(p: Prop): string {
  return p.field ? (fieldType(p.field.type)?.name ?? "Field") : "Attribute";
}
