// Dates are epoch milliseconds on the wire; the editor shows and edits
// them as wall-clock times in a chosen time zone (the browser's by default).
import dayjs from "dayjs";
import timezone from "dayjs/plugin/timezone";
import utc from "dayjs/plugin/utc";

dayjs.extend(utc);
dayjs.extend(timezone);

export const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

let zones: string[] | undefined;
/** allZones: the IANA time zones this browser knows. */
export function allZones(): string[] {
  if (!zones) {
    const list = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
    zones = Array.from(new Set(["UTC", browserZone, ...list]));
  }
  return zones;
}

/** toLocal: epoch ms → "YYYY-MM-DDTHH:mm" (an <input type="datetime-local"> value) in zone. */
export function toLocal(ms: number | null | undefined, zone: string, format = "YYYY-MM-DDTHH:mm"): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "";
  return dayjs(ms).tz(zone).format(format);
}

/** fromLocal: a wall-clock "YYYY-MM-DDTHH:mm[:ss]" in zone → epoch ms (null when empty or invalid). */
export function fromLocal(s: string, zone: string): number | null {
  if (!s) return null;
  const d = dayjs.tz(s.replace("T", " "), zone);
  return d.isValid() ? d.valueOf() : null;
}

/** show: a date for people, in zone. */
export function show(ms: number | null | undefined, zone: string): string {
  if (ms === null || ms === undefined) return "—";
  return dayjs(ms).tz(zone).format("D MMM YYYY, HH:mm");
}

export { dayjs };
