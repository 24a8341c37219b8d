// The filter builder's model and its translation to HALO's search syntax.
// A filter is a group of conditions (and nested groups, one level in the
// UI), matched "all of" (and) or "any of" (or). Conditions on attributes
// go to `metaSearch`, on fields to `searchValues`; the API AND-s the two
// trees, so an "any of" group cannot mix attributes and fields: the
// builder says so instead of sending something else.
import type { Schemas } from "../../../api/client";
import type { Prop, ValueKind } from "./props";

type Expression = Schemas["Expression"];

export type Op = "=" | "!=" | ">" | ">=" | "<" | "<=" | "in" | "!in" | "like" | "empty" | "notEmpty";

export type Value = string | number | boolean | (string | number)[] | null;

export interface Condition {
  type: "cond";
  /** A Prop key: an attribute, or values.<field>. */
  prop: string;
  op: Op;
  value: Value;
}

export interface Group {
  type: "group";
  match: "all" | "any";
  items: (Condition | Group)[];
}

export const emptyFilter = (): Group => ({ type: "group", match: "all", items: [] });

/** The operators offered for each kind of value, as the API takes them. */
export const opsByKind: Record<ValueKind, Op[]> = {
  text: ["like", "=", "!=", "in", "!in", "<", "<=", ">", ">=", "empty", "notEmpty"],
  number: ["=", "!=", ">", ">=", "<", "<=", "in", "!in", "empty", "notEmpty"],
  date: [">", ">=", "<", "<=", "=", "!=", "empty", "notEmpty"],
  boolean: ["=", "!=", "empty", "notEmpty"],
  choice: ["=", "!=", "in", "!in", "empty", "notEmpty"],
  object: ["like", "empty", "notEmpty"],
};

export function opLabel(op: Op, kind: ValueKind): string {
  const dated = kind === "date";
  switch (op) {
    case "=":
      return dated ? "is at" : "is";
    case "!=":
      return dated ? "is not at" : "is not";
    case ">":
      return dated ? "is after" : "is greater than";
    case ">=":
      return dated ? "is at or after" : "is at least";
    case "<":
      return dated ? "is before" : "is less than";
    case "<=":
      return dated ? "is at or before" : "is at most";
    case "in":
      return "is one of";
    case "!in":
      return "is none of";
    case "like":
      return "contains";
    case "empty":
      return "is empty";
    case "notEmpty":
      return "is not empty";
  }
}

export const needsValue = (op: Op) => op !== "empty" && op !== "notEmpty";
export const isList = (op: Op) => op === "in" || op === "!in";

/** problem: why a condition cannot be sent yet (undefined: it can). */
export function problem(c: Condition, p: Prop | undefined): string | undefined {
  if (!p) return "Choose a field";
  if (!opsByKind[p.kind].includes(c.op)) return "Choose an operator";
  if (!needsValue(c.op)) return undefined;
  const v = c.value;
  if (isList(c.op)) return Array.isArray(v) && v.length > 0 ? undefined : "Give at least one value";
  if (v === null || v === "" || Array.isArray(v)) return "Give a value";
  if (c.op === "like" && String(v).trim().length < 3) return "Type at least 3 characters";
  return undefined;
}

function leaf(c: Condition, p: Prop): Expression {
  const property = p.meta ? p.key : p.key.slice("values.".length);
  if (c.op === "empty" || c.op === "notEmpty") return { operation: c.op === "empty" ? "=" : "!=", property, value: null };
  const type = p.kind === "number" ? "number" : p.kind === "date" ? "date" : p.kind === "boolean" ? "boolean" : "string";
  const cast = (v: string | number | boolean) => (type === "number" || type === "date" ? Number(v) : type === "boolean" ? v === true || v === "true" : String(v));
  const value = Array.isArray(c.value) ? c.value.map(cast) : cast(c.value as string | number | boolean);
  return { operation: c.op, property, value: c.op === "like" ? String(value).trim() : value, type };
}

export interface Trees {
  searchValues?: Expression;
  metaSearch?: Expression;
}

export class FilterError extends Error {}

function combine(match: "all" | "any", list: Expression[]): Expression | undefined {
  if (list.length === 0) return undefined;
  if (list.length === 1) return list[0];
  return { condition: match === "all" ? "and" : "or", operands: list };
}

/**
 * compile turns a filter into the search's two trees; conditions not
 * complete yet are left out. Throws FilterError when an "any of" group
 * mixes attributes and fields, which HALO's syntax cannot say.
 */
export function compile(g: Group, props: Map<string, Prop>): Trees {
  const values: Expression[] = [];
  const meta: Expression[] = [];
  for (const n of g.items) {
    if (n.type === "group") {
      const t = compile(n, props);
      if (t.searchValues) values.push(t.searchValues);
      if (t.metaSearch) meta.push(t.metaSearch);
      continue;
    }
    const p = props.get(n.prop);
    if (!p || problem(n, p)) continue;
    (p.meta ? meta : values).push(leaf(n, p));
  }
  if (g.match === "any" && values.length > 0 && meta.length > 0) {
    throw new FilterError(
      "“Any of” cannot mix item attributes (name, dates, authors) with fields: HALO's search ANDs the two. Use “all of”, or put them in separate groups.",
    );
  }
  return { searchValues: combine(g.match, values), metaSearch: combine(g.match, meta) };
}

/** countConditions: how many complete conditions a filter holds. */
export function countConditions(g: Group, props: Map<string, Prop>): number {
  return g.items.reduce((n, i) => n + (i.type === "group" ? countConditions(i, props) : problem(i, props.get(i.prop)) ? 0 : 1), 0);
}

// In the URL a filter is compact JSON: {"m":"any","c":[["values.price",">",3],{"m":"all","c":[…]}]}.
type Wire = { m: "all" | "any"; c: (Wire | [string, Op, Value?])[] };

function toWire(g: Group): Wire {
  return {
    m: g.match,
    c: g.items.map((i) => (i.type === "group" ? toWire(i) : needsValue(i.op) ? [i.prop, i.op, i.value] : [i.prop, i.op])),
  };
}

function fromWire(w: Wire, depth = 0): Group {
  if (!w || (w.m !== "all" && w.m !== "any") || !Array.isArray(w.c) || depth > 3) throw new Error("bad filter");
  return {
    type: "group",
    match: w.m,
    items: w.c.map((i) =>
      Array.isArray(i)
        ? { type: "cond", prop: String(i[0]), op: i[1], value: (i[2] ?? null) as Value }
        : fromWire(i as Wire, depth + 1),
    ),
  };
}

export function encodeFilter(g: Group): string {
  return g.items.length === 0 ? "" : JSON.stringify(toWire(g));
}

export function decodeFilter(s: string | null): Group {
  if (!s) return emptyFilter();
  try {
    return fromWire(JSON.parse(s) as Wire);
  } catch {
    return emptyFilter();
  }
}
