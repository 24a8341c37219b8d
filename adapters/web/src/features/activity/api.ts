// An app's activity: the events its apps report (HALO's daily events)
// and its active devices, per UTC day.
import { useQuery } from "@tanstack/react-query";
import dayjs from "dayjs";
import utc from "dayjs/plugin/utc";
import { api, type Schemas } from "../../api/client";
import { unwrap } from "../../lib/errors";

dayjs.extend(utc);

export type EventStats = Schemas["EventStats"];
export type DayStats = EventStats["days"][number];

/** The event types apps report, as HALO numbers them. */
export const eventTypes = [
  { type: "1", label: "App opened" },
  { type: "2", label: "Device registered" },
  { type: "3", label: "Device updated" },
  { type: "4", label: "Location" },
] as const;

/** useEventStats reads the last `days` UTC days (today included) of app. */
export function useEventStats(app: string, days: number, enabled: boolean) {
  const to = dayjs.utc().format("YYYY-MM-DD");
  const from = dayjs.utc().subtract(days - 1, "day").format("YYYY-MM-DD");
  return useQuery({
    queryKey: ["eventStats", app, from, to],
    queryFn: async () => unwrap(await api.GET("/api/events/daily/stats", { params: { query: { app, from, to } } })),
    enabled,
    staleTime: 30_000,
  });
}
