// The current app's activity: what its apps report (HALO's daily events,
// POST /api/events/daily) and how many devices were active, per UTC day.
// Needs read on the app; the API checks it again.
import { Alert, Group, Paper, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import { useParams, useSearchParams } from "react-router";
import { describe } from "../../lib/errors";
import { useRights } from "../access/hooks";
import { can, whyNot } from "../access/rights";
import { Warning } from "../modules/components/ModuleDialogs";
import { PageLoader } from "../shell/PageLoader";
import { eventTypes, useEventStats, type DayStats } from "./api";

const ranges = ["7", "30", "90"];

export function ActivityPage() {
  const { appId = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const days = ranges.includes(params.get("days") ?? "") ? Number(params.get("days")) : 30;
  const rights = useRights();
  const allowed = can(rights, "read", { app: appId });
  const stats = useEventStats(appId, days, allowed);

  return (
    <Stack>
      <Group justify="space-between" align="end">
        <div>
          <Title order={1} size="h2">
            Activity
          </Title>
          <Text c="dimmed" size="sm">
            The events the app's users report (app opened, device registered or updated, location) and its active devices,
            per day (UTC).
          </Text>
        </div>
        <SegmentedControl
          aria-label="Days shown"
          value={String(days)}
          onChange={(v) => setParams(v === "30" ? {} : { days: v }, { replace: true })}
          data={ranges.map((r) => ({ value: r, label: `${r} days` }))}
        />
      </Group>
      {!rights ? (
        <PageLoader />
      ) : !allowed ? (
        <Warning title="Not available">{whyNot("read", { app: appId })}</Warning>
      ) : stats.isPending ? (
        <PageLoader label="Loading the activity" />
      ) : stats.isError ? (
        <Alert color="red" title="The activity could not be loaded">
          {describe(stats.error)}
        </Alert>
      ) : (
        <Activity days={stats.data.days} />
      )}
    </Stack>
  );
}

function Activity({ days }: { days: DayStats[] }) {
  const newestFirst = [...days].reverse();
  const events = days.reduce((n, d) => n + d.events, 0);
  const peak = days.reduce((n, d) => Math.max(n, d.activeDevices), 0);
  const today = days.at(-1);
  return (
    <>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Figure label="Events in these days" value={events} />
        <Figure label="Active devices today" value={today?.activeDevices ?? 0} />
        <Figure label="Most active devices in a day" value={peak} />
      </SimpleGrid>
      {events === 0 && (
        <Alert color="gray" title="No events in these days">
          Apps built on the HALO SDKs report an event when they open, register or update a device, or send a location.
          Reports sent with an app token count as events; an identified user's also counts their device as active.
        </Alert>
      )}
      <Paper withBorder>
        <Table striped highlightOnHover>
          <Table.Caption>Events and active devices per day, newest first</Table.Caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Day</Table.Th>
              <Table.Th scope="col" ta="right">
                Active devices
              </Table.Th>
              <Table.Th scope="col" ta="right">
                Events
              </Table.Th>
              {eventTypes.map((t) => (
                <Table.Th key={t.type} scope="col" ta="right">
                  {t.label}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {newestFirst.map((d) => (
              <Table.Tr key={d.day}>
                <Table.Th scope="row" fw={400}>
                  {d.day}
                </Table.Th>
                <Table.Td ta="right">{d.activeDevices}</Table.Td>
                <Table.Td ta="right">{d.events}</Table.Td>
                {eventTypes.map((t) => (
                  <Table.Td key={t.type} ta="right">
                    {d.byType[t.type] ?? 0}
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Paper>
    </>
  );
}

function Figure({ label, value }: { label: string; value: number }) {
  return (
    <Paper withBorder p="md">
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text fz={28} fw={600} aria-label={`${label}: ${value}`}>
        {value.toLocaleString()}
      </Text>
    </Paper>
  );
}
