// The structure editor's working copy of a module: fields as forms hold
// them (numbers as text, JSON defaults as text), converted from and to the
// API's shape, and checked as the API checks them (domain/content's
// ValidateFields) so most mistakes are shown before saving.
import type { Schemas } from "../../../api/client";
import type { Module, ModuleField } from "../api";
import { fieldType, type FieldType, type RuleName, type Widget } from "../../../lib/fieldTypes";

export interface DraftRules {
  minLength: string;
  maxLength: string;
  pattern: string;
  min: string; // a number, or for dates epoch ms as text
  max: string;
  values: string[];
  /** The default value; JSON kinds and localized texts hold their JSON text. */
  default: unknown;
  module: string;
  mediaTypes: string[];
  widget: string;
}

export interface DraftField {
  /** A key for React and the error map; stable while editing. */
  key: string;
  id?: string;
  name: string;
  type: string;
  required: boolean;
  localized: boolean;
  description: string;
  rules: DraftRules;
}

export interface DraftTag {
  key: string;
  id?: string;
  name: string;
  value: string;
  tagType?: string;
}

export interface Draft {
  name: string;
  isSingle: boolean;
  tags: DraftTag[];
  fields: DraftField[];
}

let seq = 0;
export const newKey = () => `k${++seq}`;

const num = (n: number | undefined) => (n === undefined || n === null ? "" : String(n));

/** defaultIsJson: the default of these fields is edited as JSON text. */
export function defaultIsJson(f: { type: string; localized: boolean }): boolean {
  const t = fieldType(f.type);
  return t?.kind === "object" || t?.kind === "list" || (f.localized && t?.kind === "text");
}

export function emptyRules(): DraftRules {
  return { minLength: "", maxLength: "", pattern: "", min: "", max: "", values: [], default: undefined, module: "", mediaTypes: [], widget: "" };
}

export function newField(type = "000000000000000000000001"): DraftField {
  return { key: newKey(), name: "", type, required: false, localized: false, description: "", rules: emptyRules() };
}

export function draftOf(m: Module): Draft {
  return {
    name: m.name,
    isSingle: m.isSingle,
    tags: m.tags.map((t) => ({ key: newKey(), id: t.id || undefined, name: t.name, value: t.value, tagType: t.tagType || undefined })),
    fields: (m.fields ?? []).map(draftField),
  };
}

function draftField(f: ModuleField): DraftField {
  const r = f.rules;
  const d = { type: f.type, localized: f.localized };
  return {
    key: newKey(),
    id: f.id,
    name: f.name,
    type: f.type,
    required: f.required,
    localized: f.localized,
    description: f.description,
    rules: {
      minLength: num(r.minLength),
      maxLength: num(r.maxLength),
      pattern: r.pattern ?? "",
      min: num(r.min),
      max: num(r.max),
      values: r.values ?? [],
      default: r.default === undefined || r.default === null ? undefined : defaultIsJson(d) ? JSON.stringify(r.default) : r.default,
      module: r.module ?? "",
      mediaTypes: r.mediaTypes ?? [],
      widget: r.widget ?? "",
    },
  };
}

/** retype changes a field's type, keeping what the new type takes. */
export function retype(f: DraftField, type: string): DraftField {
  const from = fieldType(f.type);
  const to = fieldType(type);
  if (!to) return f;
  const keep = (r: RuleName) => to.rules.includes(r);
  const r = f.rules;
  const localized = f.localized && to.kind === "text";
  const sameValues = from?.kind === to.kind;
  return {
    ...f,
    type,
    localized,
    rules: {
      minLength: keep("minLength") ? r.minLength : "",
      maxLength: keep("maxLength") ? r.maxLength : "",
      pattern: keep("pattern") ? r.pattern : "",
      min: keep("min") && sameValues ? r.min : "",
      max: keep("max") && sameValues ? r.max : "",
      values: keep("values") ? r.values : [],
      default: sameValues && localized === f.localized ? r.default : undefined,
      module: keep("module") ? r.module : "",
      mediaTypes: keep("mediaTypes") ? r.mediaTypes : [],
      widget: to.widgets.includes(r.widget as never) ? r.widget : "",
    },
  };
}

/** relocalize turns localization on or off; the default changes shape. */
export function relocalize(f: DraftField, localized: boolean): DraftField {
  return { ...f, localized, rules: { ...f.rules, default: undefined } };
}

type FieldBody = Schemas["ModuleFieldBody"];

/** bodyOfDraft is the PUT body of the draft (checked first by checkDraft). */
export function bodyOfDraft(d: Draft): Schemas["ModuleBody"] {
  return {
    name: d.name.trim(),
    isSingle: d.isSingle,
    tags: d.tags.map((t) => ({ id: t.id, name: t.name, value: t.value, tagType: t.tagType })),
    fields: d.fields.map(fieldBody),
  };
}

export function fieldBody(f: DraftField): FieldBody {
  const t = fieldType(f.type);
  const has = (r: RuleName) => !!t?.rules.includes(r);
  const r = f.rules;
  const rules: Schemas["FieldRules"] = {};
  if (has("minLength") && r.minLength !== "") rules.minLength = Number(r.minLength);
  if (has("maxLength") && r.maxLength !== "") rules.maxLength = Number(r.maxLength);
  if (has("pattern") && r.pattern !== "") rules.pattern = r.pattern;
  if (has("min") && r.min !== "") rules.min = Number(r.min);
  if (has("max") && r.max !== "") rules.max = Number(r.max);
  if (has("values") && r.values.length) rules.values = r.values;
  if (has("module") && r.module) rules.module = r.module;
  if (has("mediaTypes") && r.mediaTypes.length) rules.mediaTypes = r.mediaTypes;
  const def = defaultValue(f);
  if (has("default") && def.ok && def.value !== undefined) rules.default = def.value;
  // The type's first widget is its default: left out.
  if (r.widget && t?.widgets.includes(r.widget as Widget) && r.widget !== t.widgets[0]) rules.widget = r.widget as Widget;
  return {
    id: f.id,
    name: f.name,
    description: f.description,
    type: f.type,
    required: f.required,
    localized: f.localized && t?.kind === "text",
    rules,
  };
}

/** defaultValue reads a field's default as the API takes it. */
export function defaultValue(f: DraftField): { ok: true; value: unknown } | { ok: false; message: string } {
  const d = f.rules.default;
  if (d === undefined || d === "" || d === null) return { ok: true, value: undefined };
  if (!defaultIsJson(f)) return { ok: true, value: d };
  try {
    return { ok: true, value: JSON.parse(String(d)) };
  } catch (err) {
    return { ok: false, message: `not valid JSON: ${(err as Error).message}` };
  }
}

/** Errors of a field, by the property they concern. */
export type FieldErrors = Partial<Record<"name" | "type" | "localized" | keyof DraftRules | "general", string>>;

export interface DraftErrors {
  name?: string;
  tags?: string;
  fields: Record<string, FieldErrors>;
  count: number;
}

/**
 * checkDraft mirrors the API's checks of a module (ValidateModuleName,
 * ValidateFields, the default's own validation).
 */
export function checkDraft(d: Draft): DraftErrors {
  const out: DraftErrors = { fields: {}, count: 0 };
  const name = d.name.trim();
  if (!name || [...name].length > 200) {
    out.name = "A name of 1 to 200 characters is required.";
    out.count++;
  }
  if (d.tags.some((t) => !t.name.trim() && !t.id)) {
    out.tags = "Every tag needs a name.";
    out.count++;
  }
  const seen = new Map<string, number>();
  d.fields.forEach((f, i) => {
    const e = checkField(f);
    const lower = f.name.toLowerCase();
    if (!e.name && seen.has(lower)) e.name = `The name is used by field ${(seen.get(lower) ?? 0) + 1} already (names are compared ignoring case).`;
    if (!seen.has(lower)) seen.set(lower, i);
    const n = Object.keys(e).length;
    if (n) {
      out.fields[f.key] = e;
      out.count += n;
    }
  });
  return out;
}

const isInt = (s: string) => /^\d+$/.test(s.trim());
const isNum = (s: string) => s.trim() !== "" && Number.isFinite(Number(s));

export function checkField(f: DraftField): FieldErrors {
  const e: FieldErrors = {};
  const t = fieldType(f.type);
  if (!f.name || f.name.trim() !== f.name || [...f.name].length > 100) {
    e.name = f.name.trim() !== f.name ? "No spaces at the start or the end." : "A name of 1 to 100 characters is required.";
  }
  if (!t) {
    e.type = "Choose a type.";
    return e;
  }
  const r = f.rules;
  const has = (x: RuleName) => t.rules.includes(x);
  if (has("minLength") && r.minLength !== "" && !isInt(r.minLength)) e.minLength = "A whole number, 0 or more.";
  if (has("maxLength") && r.maxLength !== "" && !isInt(r.maxLength)) e.maxLength = "A whole number, 0 or more.";
  if (!e.minLength && !e.maxLength && r.minLength !== "" && r.maxLength !== "" && Number(r.minLength) > Number(r.maxLength)) {
    e.maxLength = "Must be at least the minimum length.";
  }
  if (has("pattern") && r.pattern) {
    const bad = regexError(r.pattern);
    if (bad) e.pattern = bad;
  }
  if (has("min") && r.min !== "" && !isNum(r.min)) e.min = "Must be a number.";
  if (has("max") && r.max !== "" && !isNum(r.max)) e.max = "Must be a number.";
  if (!e.min && !e.max && r.min !== "" && r.max !== "" && Number(r.min) > Number(r.max)) {
    e.max = t.kind === "timestamp" ? "Must not be before the earliest date." : "Must be at least the minimum.";
  }
  if (t.kind === "choice" || t.kind === "choices") {
    if (!r.values.length) e.values = "A choice field needs at least one option.";
  }
  if (has("values") && r.values.length) {
    if (r.values.some((v) => v.trim() === "")) e.values = "Options cannot be empty.";
    else if (new Set(r.values).size !== r.values.length) e.values = "Each option once.";
    else if (t.kind === "number" && r.values.some((v) => !isNum(v))) e.values = "The allowed values of a number field are numbers.";
  }
  if (has("mediaTypes") && r.mediaTypes.some((m) => !/^\.?[A-Za-z0-9]+$/.test(m))) {
    e.mediaTypes = "File extensions such as jpg or pdf.";
  }
  if (has("default") && Object.keys(e).length === 0) {
    const bad = defaultError(f, t);
    if (bad) e.default = bad;
  }
  return e;
}

/** regexError: why a pattern does not compile, or undefined. */
export function regexError(pattern: string): string | undefined {
  try {
    new RegExp(`^(?:${pattern})$`, "u");
    return undefined;
  } catch (err) {
    return `Not a valid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, "")}`;
  }
}

const textType = "000000000000000000000001";
const youtube = /^(https?:\/\/)?(www\.|m\.)?(youtube\.com|youtu\.be)\/.+$/;
const color = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const locale = /^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})*$/;

/** defaultError checks the default as the API checks a value of the field. */
function defaultError(f: DraftField, t: FieldType): string | undefined {
  const d = defaultValue(f);
  if (!d.ok) return d.message;
  const v = d.value;
  if (v === undefined) return undefined;
  const r = f.rules;
  const text = (s: unknown): string | undefined => {
    if (typeof s !== "string") return "Must be a text.";
    const n = [...s].length;
    const max = r.maxLength !== "" ? Number(r.maxLength) : t.id === textType ? 1000 : undefined;
    if (r.minLength !== "" && n < Number(r.minLength)) return `Must be at least ${r.minLength} characters.`;
    if (max !== undefined && n > max) return `Must be at most ${max} characters.`;
    if (r.pattern && !new RegExp(`^(?:${r.pattern})$`, "u").test(s)) return `Must match the pattern.`;
    if (r.values.length && t.kind === "text" && !r.values.includes(s)) return "Must be one of the allowed values.";
    return undefined;
  };
  switch (f.localized && t.kind === "text" ? "localized" : t.kind) {
    case "text":
      return text(v);
    case "localized":
      if (typeof v === "string" && t.kind === "localized") return text(v);
      if (typeof v !== "object" || v === null || Array.isArray(v)) return 'An object of locale → text, such as {"en": "Hello"}.';
      for (const [loc, s] of Object.entries(v)) {
        if (!locale.test(loc)) return `“${loc}” is not a locale code such as en or en-US.`;
        const bad = text(s);
        if (bad) return `${loc}: ${bad}`;
      }
      return undefined;
    case "number":
    case "timestamp": {
      const n = typeof v === "number" ? v : NaN;
      if (!Number.isFinite(n)) return t.kind === "number" ? "Must be a number." : "Must be a date.";
      if (r.min !== "" && n < Number(r.min)) return "Must not be below the minimum.";
      if (r.max !== "" && n > Number(r.max)) return "Must not be above the maximum.";
      if (t.kind === "number" && r.values.length && !r.values.some((a) => Number(a) === n)) return "Must be one of the allowed values.";
      return undefined;
    }
    case "url": {
      if (typeof v !== "string") return "Must be an address.";
      let u: URL;
      try {
        u = new URL(v);
      } catch {
        return "Must be an absolute http or https address.";
      }
      if ((u.protocol !== "http:" && u.protocol !== "https:") || /\s/.test(v)) return "Must be an absolute http or https address.";
      if (r.mediaTypes.length) {
        const last = u.pathname.split("/").pop() ?? "";
        const ext = last.includes(".") ? last.split(".").pop()!.toLowerCase() : "";
        if (!r.mediaTypes.some((m) => m.replace(/^\./, "").toLowerCase() === ext)) return `Must end in ${r.mediaTypes.join(", ")}.`;
      }
      return text(v);
    }
    case "youtube":
      return typeof v === "string" && youtube.test(v) ? undefined : "Must be a YouTube address.";
    case "boolean":
      return typeof v === "boolean" ? undefined : "Must be yes or no.";
    case "color":
      return typeof v === "string" && color.test(v) ? undefined : "A colour such as #1a2b3c.";
    case "object":
      return typeof v === "object" && v !== null && !Array.isArray(v) ? undefined : "Must be a JSON object, such as {}.";
    case "list":
      return Array.isArray(v) ? undefined : "Must be a JSON array, such as [].";
    case "choice":
      return typeof v === "string" && r.values.includes(v) ? undefined : "Must be one of the options.";
    case "choices":
      return Array.isArray(v) && v.every((x) => r.values.includes(x)) && new Set(v).size === v.length
        ? undefined
        : "Must be some of the options.";
  }
  return undefined;
}
