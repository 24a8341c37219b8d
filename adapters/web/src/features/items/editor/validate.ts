// Client-side checks that mirror the API's (domain/content/validate.go), so
// that most mistakes are shown at their field before a save. The API checks
// again; its 400 names the field and is shown there too.
import { fieldType, kindOf } from "../../../lib/fieldTypes";
import type { Draft, Field } from "./model";

const youtubeRE = /^(https?:\/\/)?(www\.|m\.)?(youtube\.com|youtu\.be)\/.+$/;
const colorRE = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
export const localeRE = /^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})*$/;
const idRE = /^[0-9a-zA-Z_-]{1,64}$/;
const textTypeId = "000000000000000000000001";
const maxTimestamp = 8.64e15;

/** isEmpty: no value, as the API counts it for a required field. */
export function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined || v === "") return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") return Object.keys(v as object).length === 0;
  return false;
}

function chars(s: string): number {
  return Array.from(s).length;
}

/** maxLengthOf: the field's limit, or Text's default of 1000. */
export function maxLengthOf(f: Field): number | undefined {
  return f.rules.maxLength ?? (f.type === textTypeId ? 1000 : undefined);
}

function wholeMatch(pattern: string, s: string): boolean {
  try {
    return new RegExp(`^(?:${pattern})$`, "u").test(s);
  } catch {
    return true; // an RE2 pattern JavaScript cannot read: the API decides
  }
}

function checkText(f: Field, s: string): string | undefined {
  const r = f.rules;
  const n = chars(s);
  const max = maxLengthOf(f);
  if (r.minLength !== undefined && n < r.minLength) return `Must be at least ${r.minLength} characters (now ${n})`;
  if (max !== undefined && n > max) return `Must be at most ${max} characters (now ${n})`;
  if (r.pattern && !wholeMatch(r.pattern, s)) return `Must match the pattern ${r.pattern}`;
  const kind = kindOf(f);
  if (r.values?.length && (kind === "text" || kind === "localized") && !r.values.includes(s)) return `Must be one of ${r.values.join(", ")}`;
  return undefined;
}

function checkURL(f: Field, s: string): string | undefined {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return "Must be an absolute http or https address";
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.host || /\s/.test(s)) return "Must be an absolute http or https address";
  const types = f.rules.mediaTypes;
  if (types?.length) {
    const m = /\.([^./]*)$/.exec(decodeURIComponent(u.pathname));
    const ext = (m?.[1] ?? "").toLowerCase();
    if (!types.some((t) => t.replace(/^\./, "").toLowerCase() === ext)) return `Must be a file of type ${types.join(", ")}`;
  }
  return checkText(f, s);
}

function checkNumber(f: Field, v: unknown, timestamp: boolean): string | undefined {
  if (typeof v !== "number" || !Number.isFinite(v)) return timestamp ? "Must be a date" : "Must be a number";
  if (timestamp && (!Number.isInteger(v) || Math.abs(v) > maxTimestamp)) return "Must be a date";
  const r = f.rules;
  if (r.min !== undefined && v < r.min) return `Must be at least ${timestamp ? new Date(r.min).toISOString() : r.min}`;
  if (r.max !== undefined && v > r.max) return `Must be at most ${timestamp ? new Date(r.max).toISOString() : r.max}`;
  if (!timestamp && r.values?.length && !r.values.some((a) => Number(a) === v)) return `Must be one of ${r.values.join(", ")}`;
  return undefined;
}

/** checkValue: what is wrong with v for field f (undefined: nothing). */
export function checkValue(f: Field, v: unknown): string | undefined {
  if (isEmpty(v) && !(v === "" && kindOf(f) !== "text")) {
    return f.required ? "A value is required" : undefined;
  }
  const kind = kindOf(f);
  switch (kind) {
    case "text":
      return typeof v === "string" ? checkText(f, v) : "Must be a text";
    case "number":
      return checkNumber(f, v, false);
    case "timestamp":
      return checkNumber(f, v, true);
    case "url":
      return typeof v === "string" ? checkURL(f, v) : "Must be an address";
    case "youtube":
      return typeof v === "string" && youtubeRE.test(v) ? undefined : "Must be a YouTube address (youtube.com/… or youtu.be/…)";
    case "boolean":
      return typeof v === "boolean" ? undefined : "Must be yes or no";
    case "color":
      return typeof v === "string" && colorRE.test(v) ? undefined : "Must be a colour such as #1a2b3c";
    case "relation":
      return typeof v === "string" && idRE.test(v) ? undefined : "Must be an item";
    case "relations":
      return Array.isArray(v) && v.every((x) => typeof x === "string" && idRE.test(x)) ? undefined : "Must be items";
    case "object":
      return v && typeof v === "object" && !Array.isArray(v) ? undefined : "Must be a JSON object";
    case "list":
      return Array.isArray(v) ? undefined : "Must be a JSON array";
    case "localized": {
      if (!v || typeof v !== "object" || Array.isArray(v)) return "Must be one text per locale";
      for (const [loc, s] of Object.entries(v as Record<string, unknown>)) {
        if (!localeRE.test(loc)) return `“${loc}” is not a locale code such as en-US`;
        if (typeof s !== "string") return `${loc}: must be a text`;
        const e = checkText(f, s);
        if (e) return `${loc}: ${e}`;
      }
      return undefined;
    }
    case "choice":
      return typeof v === "string" && (f.rules.values ?? []).includes(v) ? undefined : `Must be one of ${(f.rules.values ?? []).join(", ")}`;
    case "choices": {
      const ok = Array.isArray(v) && new Set(v).size === v.length && v.every((x) => typeof x === "string" && (f.rules.values ?? []).includes(x));
      return ok ? undefined : `Must be some of ${(f.rules.values ?? []).join(", ")}`;
    }
    default:
      return fieldType(f.type) ? undefined : "Unknown field type";
  }
}

/**
 * checkDraft: every problem of the draft, keyed as the form keys its
 * inputs: "name" for the item's name, "values.<field>" for a value.
 */
export function checkDraft(fields: Field[], d: Draft): Record<string, string> {
  const out: Record<string, string> = {};
  const n = chars(d.name.trim());
  if (n === 0) out.name = "A name is required";
  else if (chars(d.name) > 1000) out.name = "Must be at most 1000 characters";
  for (const f of fields) {
    const e = checkValue(f, d.values[f.name]);
    if (e) out[`values.${f.name}`] = e;
  }
  return out;
}

/** errorKey: the form key of the input an API 400 names (its extra.field). */
export function errorKey(extra: Record<string, unknown>): string | undefined {
  const field = typeof extra.field === "string" ? extra.field : undefined;
  if (!field) return undefined;
  const isValue = typeof extra.error === "string" && extra.error.startsWith("validator.");
  return isValue ? `values.${field}` : field;
}
