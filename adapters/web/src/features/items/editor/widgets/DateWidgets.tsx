// Dates and times: epoch milliseconds on the wire, edited as wall-clock
// time in the editor's time zone with the browser's own (keyboard
// operable) date and time inputs.
import { TextInput } from "@mantine/core";
import { dayjs, fromLocal, toLocal } from "../zones";
import type { WidgetProps } from "./props";

function zoneNote(p: WidgetProps) {
  return [p.description, `Time zone: ${p.zone}`].filter(Boolean).join(" · ");
}

export function DateTimeWidget(p: WidgetProps) {
  const ms = typeof p.value === "number" ? p.value : null;
  return (
    <TextInput
      id={p.id}
      type="datetime-local"
      label={p.label}
      description={zoneNote(p)}
      withAsterisk={p.required}
      value={toLocal(ms, p.zone)}
      onChange={(e) => p.onChange(fromLocal(e.currentTarget.value, p.zone))}
      error={p.error}
      readOnly={p.readOnly}
    />
  );
}

/** DateWidget: a day, kept as its midnight in the editor's time zone. */
export function DateWidget(p: WidgetProps) {
  const ms = typeof p.value === "number" ? p.value : null;
  return (
    <TextInput
      id={p.id}
      type="date"
      label={p.label}
      description={zoneNote(p)}
      withAsterisk={p.required}
      value={toLocal(ms, p.zone, "YYYY-MM-DD")}
      onChange={(e) => p.onChange(fromLocal(e.currentTarget.value && `${e.currentTarget.value}T00:00`, p.zone))}
      error={p.error}
      readOnly={p.readOnly}
    />
  );
}

/**
 * TimeWidget: a time of day. A value keeps its day (in the editor's zone)
 * when its time changes; a new one is on 1 January 1970.
 */
export function TimeWidget(p: WidgetProps) {
  const ms = typeof p.value === "number" ? p.value : null;
  const day = ms === null ? "1970-01-01" : dayjs(ms).tz(p.zone).format("YYYY-MM-DD");
  return (
    <TextInput
      id={p.id}
      type="time"
      label={p.label}
      description={zoneNote(p)}
      withAsterisk={p.required}
      value={toLocal(ms, p.zone, "HH:mm")}
      onChange={(e) => p.onChange(e.currentTarget.value ? fromLocal(`${day}T${e.currentTarget.value}`, p.zone) : null)}
      error={p.error}
      readOnly={p.readOnly}
    />
  );
}
