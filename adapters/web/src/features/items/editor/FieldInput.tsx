// FieldInput shows one field with the widget its type and `rules.widget`
// ask for (src/lib/fieldTypes.ts); the heavy ones (rich text) load on
// demand.
import { Skeleton } from "@mantine/core";
import { lazy, Suspense } from "react";
import { fieldType, kindOf, type Widget } from "../../../lib/fieldTypes";
import { CheckboxesWidget, MultiSelectWidget, RadioWidget, SelectWidget } from "./widgets/ChoiceWidgets";
import { DateTimeWidget, DateWidget, TimeWidget } from "./widgets/DateWidgets";
import { JsonWidget, ListWidget, LocationWidget, TagsWidget, textsOnly } from "./widgets/ListWidgets";
import { LocalizedWidget } from "./widgets/LocalizedWidget";
import { MarkdownWidget } from "./widgets/MarkdownWidget";
import type { WidgetProps } from "./widgets/props";
import { RelationWidget } from "./widgets/RelationWidget";
import { BooleanWidget, ColorWidget, NumberWidget, TextareaWidget, TextWidget, UrlWidget } from "./widgets/TextWidgets";

const RichTextWidget = lazy(() => import("./widgets/RichTextWidget"));

/** widgetOf: the field's widget, `rules.widget` when its type offers it, else the type's default. */
export function widgetOf(field: WidgetProps["field"]): Widget | undefined {
  const t = fieldType(field.type);
  if (!t) return undefined;
  if (field.localized && t.kind === "text") return "localized";
  const w = field.rules.widget;
  return w && t.widgets.includes(w) ? w : t.widgets[0];
}

export function FieldInput(p: WidgetProps) {
  const w = widgetOf(p.field);
  switch (w) {
    case "text":
      return <TextWidget {...p} />;
    case "textarea":
      return <TextareaWidget {...p} />;
    case "richtext":
    case "html":
      return (
        <Suspense fallback={<Skeleton h={160} aria-label={`Loading the editor of ${p.label}`} />}>
          <RichTextWidget {...p} source={w === "html"} />
        </Suspense>
      );
    case "markdown":
      return <MarkdownWidget {...p} />;
    case "number":
      return <NumberWidget {...p} />;
    case "boolean":
      return <BooleanWidget {...p} />;
    case "color":
      return <ColorWidget {...p} />;
    case "url":
    case "image":
    case "video":
    case "audio":
    case "document":
    case "youtube":
      return <UrlWidget {...p} widget={w} />;
    case "datetime":
      return <DateTimeWidget {...p} />;
    case "date":
      return <DateWidget {...p} />;
    case "time":
      return <TimeWidget {...p} />;
    case "select":
      return <SelectWidget {...p} />;
    case "radio":
      return <RadioWidget {...p} />;
    case "multiselect":
      return <MultiSelectWidget {...p} />;
    case "checkboxes":
      return <CheckboxesWidget {...p} />;
    case "relation":
      return <RelationWidget {...p} multiple={false} />;
    case "relations":
      return <RelationWidget {...p} multiple />;
    case "location":
      return <LocationWidget {...p} />;
    case "list":
      return textsOnly(p.value) ? <ListWidget {...p} /> : <JsonWidget {...p} shape="array" />;
    case "tags":
      return textsOnly(p.value) ? <TagsWidget {...p} /> : <JsonWidget {...p} shape="array" />;
    case "json":
      return <JsonWidget {...p} shape={kindOf(p.field) === "list" ? "array" : "object"} />;
    case "localized":
      return <LocalizedWidget {...p} />;
    default:
      return <JsonWidget {...p} shape="object" />;
  }
}
