// "Preview as the app": the list as an app token of the module's app sees
// it now or at a chosen moment (published by then, not expired nor
// archived), scheduled publications and expiries applied.
import { Alert, Button, Group, Switch, Tooltip } from "@mantine/core";
import { DateTimePicker } from "@mantine/dates";
import { IconEye } from "@tabler/icons-react";
import dayjs from "dayjs";
import { formatDate } from "./cells";

interface Props {
  /** "now", an epoch-ms moment, or null (off). */
  preview: string | null;
  onChange: (preview: string | null) => void;
  /** The user reads the whole module (a right on single items does not count). */
  allowed: boolean;
}

const presets = () => {
  const d = (add: number, unit: dayjs.ManipulateType) => dayjs().add(add, unit).format("YYYY-MM-DD HH:mm:ss");
  return [
    { value: d(1, "hour"), label: "In an hour" },
    { value: d(1, "day"), label: "Tomorrow" },
    { value: d(1, "week"), label: "In a week" },
    { value: d(1, "month"), label: "In a month" },
  ];
};

export function PreviewSwitch({ preview, onChange, allowed }: Props) {
  return (
    <Group gap="sm" wrap="nowrap">
      <Tooltip label="Previewing as the app needs the read right on the whole module or its app." disabled={allowed} multiline w={260}>
        <div>
          <Switch
            label="Preview as the app"
            checked={preview !== null}
            disabled={!allowed && preview === null}
            onChange={(e) => onChange(e.currentTarget.checked ? "now" : null)}
          />
        </div>
      </Tooltip>
      {preview !== null && (
        <DateTimePicker
          aria-label="Preview moment"
          placeholder="Now"
          value={preview === "now" ? null : dayjs(Number(preview)).format("YYYY-MM-DD HH:mm:ss")}
          onChange={(v) => onChange(v ? String(dayjs(v).valueOf()) : "now")}
          presets={presets()}
          valueFormat="D MMM YYYY, HH:mm"
          clearable
          clearButtonProps={{ "aria-label": "Preview now" }}
          w={200}
          size="sm"
        />
      )}
    </Group>
  );
}

export function PreviewBanner({ at, onLeave }: { at: number | null; onLeave: () => void }) {
  return (
    <Alert color="blue" variant="light" icon={<IconEye aria-hidden />} title={`Preview: what the app sees ${at === null ? "now" : `on ${formatDate(at)}`}`} role="status">
      <Group justify="space-between" wrap="wrap" gap="xs">
        <span>
          Only the items an app's token would get then: published by that moment, not expired and not archived. Concepts, and
          anything scheduled later, are hidden.
        </span>
        <Button size="xs" variant="white" onClick={onLeave}>
          Leave preview
        </Button>
      </Group>
    </Alert>
  );
}
