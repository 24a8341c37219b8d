// Which columns a module's list shows: chosen by the user, remembered per
// module in localStorage (a view preference; nothing secret is stored).
import { useCallback, useEffect, useState } from "react";
import type { Prop } from "./props";

/** The state badge: not a search key, always computed from the dates. */
export const STATE = "state";

const storageKey = (moduleId: string) => `halocms.items.columns.${moduleId}`;

/** The default: the state, the first four short fields, when it changed. */
export function defaultColumns(props: Prop[]): string[] {
  const fields = props.filter((p) => !p.meta && p.kind !== "object" && p.field?.type !== "000000000000000000000012");
  return [STATE, ...fields.slice(0, 4).map((p) => p.key), "publishedAt", "updatedAt"];
}

function load(moduleId: string): string[] | null {
  try {
    const v = JSON.parse(localStorage.getItem(storageKey(moduleId)) ?? "null");
    return Array.isArray(v) && v.every((k) => typeof k === "string") ? v : null;
  } catch {
    return null;
  }
}

/**
 * useColumns: the shown columns (keys of props, plus STATE), in the order
 * of props; name is always shown first and is not listed.
 */
export function useColumns(moduleId: string, props: Prop[]): [string[], (keys: string[]) => void] {
  const [chosen, setChosen] = useState<string[] | null>(() => load(moduleId));
  useEffect(() => setChosen(load(moduleId)), [moduleId]);
  const set = useCallback(
    (keys: string[]) => {
      setChosen(keys);
      try {
        localStorage.setItem(storageKey(moduleId), JSON.stringify(keys));
      } catch {
        // Storage full or refused: the choice lasts for this page only.
      }
    },
    [moduleId],
  );
  return [shownColumns(props, chosen), set];
}

/** shownColumns: the columns chosen (or remembered for moduleId), else the default, that props still have. */
export function shownColumns(props: Prop[], chosen: string[] | null, moduleId?: string): string[] {
  const known = new Set([STATE, ...props.map((p) => p.key)]);
  return (chosen ?? (moduleId ? load(moduleId) : null) ?? defaultColumns(props)).filter((k) => known.has(k) && k !== "name");
}

/** valueFields: the fields a search must answer for these columns. */
export function valueFields(columns: string[]): string[] {
  return columns.filter((k) => k.startsWith("values.")).map((k) => k.slice("values.".length));
}
