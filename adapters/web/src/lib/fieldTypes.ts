// HALO's 21 structure-field types (domain/content/fieldtypes.go), with
// what the CMS needs to know of each: the shape of a value, which rules
// the structure editor offers, and which editor widgets may show it
// (`rules.widget`, stored with the field; the first is the default).

export type Kind =
  | "text"
  | "number"
  | "url"
  | "youtube"
  | "timestamp"
  | "boolean"
  | "color"
  | "relations"
  | "relation"
  | "object"
  | "list"
  | "localized"
  | "choices"
  | "choice";

export type RuleName = "minLength" | "maxLength" | "pattern" | "min" | "max" | "values" | "default" | "module" | "mediaTypes";

export type Widget =
  | "text"
  | "textarea"
  | "richtext"
  | "markdown"
  | "html"
  | "number"
  | "url"
  | "image"
  | "video"
  | "audio"
  | "document"
  | "youtube"
  | "date"
  | "datetime"
  | "time"
  | "boolean"
  | "color"
  | "relation"
  | "relations"
  | "json"
  | "location"
  | "list"
  | "tags"
  | "localized"
  | "select"
  | "multiselect"
  | "radio"
  | "checkboxes";

export interface FieldType {
  id: string;
  name: string;
  kind: Kind;
  /** The rules the structure editor offers for this type. */
  rules: RuleName[];
  /** Editor widgets for values of this type; the first is the default. */
  widgets: Widget[];
  /** One line for the type picker. */
  hint: string;
}

const id = (n: number) => n.toString().padStart(24, "0");
const textRules: RuleName[] = ["minLength", "maxLength", "pattern", "values", "default"];
const urlRules: RuleName[] = ["minLength", "maxLength", "pattern", "mediaTypes", "default"];

export const fieldTypes: FieldType[] = [
  { id: id(1), name: "Text", kind: "text", rules: textRules, widgets: ["text"], hint: "A line of text, up to 1000 characters or your own limit" },
  { id: id(2), name: "Number", kind: "number", rules: ["min", "max", "values", "default"], widgets: ["number"], hint: "A number; decimals allowed" },
  { id: id(3), name: "Website", kind: "url", rules: urlRules, widgets: ["url", "document"], hint: "An http(s) address" },
  { id: id(4), name: "Youtube", kind: "youtube", rules: ["default"], widgets: ["youtube"], hint: "A YouTube video address" },
  { id: id(5), name: "Image", kind: "url", rules: urlRules, widgets: ["image"], hint: "The address of an image" },
  { id: id(6), name: "Date", kind: "timestamp", rules: ["min", "max", "default"], widgets: ["datetime", "date"], hint: "A date (and time), in a time zone" },
  { id: id(7), name: "Time", kind: "timestamp", rules: ["min", "max", "default"], widgets: ["time"], hint: "A time of day" },
  { id: id(8), name: "Boolean", kind: "boolean", rules: ["default"], widgets: ["boolean"], hint: "Yes or no" },
  { id: id(9), name: "Color", kind: "color", rules: ["default"], widgets: ["color"], hint: "A colour, #rgb or #rrggbb" },
  { id: id(10), name: "Multiple relation", kind: "relations", rules: ["module"], widgets: ["relations"], hint: "Links to other items" },
  { id: id(11), name: "Single relation", kind: "relation", rules: ["module"], widgets: ["relation"], hint: "A link to another item" },
  { id: id(12), name: "Long text", kind: "text", rules: textRules, widgets: ["textarea", "richtext", "markdown", "html"], hint: "Text of any length: plain, rich text, Markdown or HTML" },
  { id: id(13), name: "Object", kind: "object", rules: ["default"], widgets: ["json", "location"], hint: "A JSON object (or a map location)" },
  { id: id(14), name: "List", kind: "list", rules: ["default"], widgets: ["list", "tags", "json"], hint: "A JSON array (a list of texts, or tags)" },
  { id: id(15), name: "Localized text", kind: "localized", rules: ["minLength", "maxLength", "pattern", "default"], widgets: ["localized"], hint: "One text per language" },
  { id: id(16), name: "Video", kind: "url", rules: urlRules, widgets: ["video"], hint: "The address of a video" },
  { id: id(17), name: "Multiple choice", kind: "choices", rules: ["values", "default"], widgets: ["checkboxes", "multiselect"], hint: "Some of a list of options (checkboxes)" },
  { id: id(18), name: "Single choice", kind: "choice", rules: ["values", "default"], widgets: ["radio", "select"], hint: "One of a list of options (radio buttons)" },
  { id: id(19), name: "Multiple select dropdown", kind: "choices", rules: ["values", "default"], widgets: ["multiselect", "checkboxes"], hint: "Some of a list of options (dropdown)" },
  { id: id(20), name: "Single select dropdown", kind: "choice", rules: ["values", "default"], widgets: ["select", "radio"], hint: "One of a list of options (dropdown)" },
  { id: id(21), name: "Audio", kind: "url", rules: urlRules, widgets: ["audio"], hint: "The address of an audio file" },
];

const byId = new Map(fieldTypes.map((t) => [t.id, t]));

export function fieldType(typeId: string | undefined): FieldType | undefined {
  return typeId ? byId.get(typeId) : undefined;
}

/** kindOf a field: a localized Text or Long text holds one text per locale. */
export function kindOf(field: { type?: string; localized?: boolean }): Kind | undefined {
  const t = fieldType(field.type);
  if (!t) return undefined;
  return field.localized && t.kind === "text" ? "localized" : t.kind;
}
