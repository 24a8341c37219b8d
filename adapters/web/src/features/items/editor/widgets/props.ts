import type { Field } from "../model";

/** What every widget gets: one field's value and how to change it. */
export interface WidgetProps {
  field: Field;
  /** The input's id (the form scrolls to it to show an error). */
  id: string;
  label: string;
  description?: string;
  required: boolean;
  value: unknown;
  /** Sets the field's value; null clears it. */
  onChange: (v: unknown) => void;
  /** A widget whose text cannot be a value yet (bad JSON) says so here. */
  onInvalid: (message: string | undefined) => void;
  error?: string;
  readOnly: boolean;
  /** The time zone dates are shown and edited in. */
  zone: string;
  appId: string;
  /** The app's module ids (relation fields without a target module search them all). */
  appModules: string[];
  /** The locales shown side by side for localized text. */
  locales: string[];
}

export const str = (v: unknown): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v));
/** orNull: an empty text is no value. */
export const orNull = (s: string): string | null => (s === "" ? null : s);

/** Fieldsets of several inputs: no padding around the legend. */
export const legendStyles = { legend: { padding: 0, marginBottom: 2 } };
