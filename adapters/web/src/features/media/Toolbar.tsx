// The library's toolbar: search by name (in the address once typed),
// kind, uploaded by me, sort; and the grid or list switch.
import { Checkbox, Group, SegmentedControl, Select, TextInput } from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { IconLayoutGrid, IconList, IconSearch } from "@tabler/icons-react";
import { useEffect, useState } from "react";
import type { MediaKind } from "./api";
import { useSelf } from "../access/hooks";
import { kinds } from "./format";
import { sorts, type LibraryParams, type SetLibraryParams } from "./params";

/** SearchInput: a name search that reports its text 300 ms after typing stops. */
export function SearchInput({ value, onChange }: { value: string; onChange: (q: string) => void }) {
  const [q, setQ] = useState(value);
  const [debounced] = useDebouncedValue(q.trim(), 300);
  useEffect(() => {
    if (debounced !== value) onChange(debounced);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [debounced]);
  useEffect(() => {
    if (value !== q.trim()) setQ(value);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value]);
  return (
    <TextInput
      aria-label="Search by name"
      placeholder="Search by name"
      leftSection={<IconSearch size={16} aria-hidden />}
      value={q}
      onChange={(e) => setQ(e.currentTarget.value)}
      w={260}
    />
  );
}

export function Toolbar({ params, update }: { params: LibraryParams; update: SetLibraryParams }) {
  const self = useSelf().data;
  return (
    <Group gap="xs" wrap="wrap">
      <SearchInput value={params.q} onChange={(q) => update({ q }, { replace: true })} />
      <Select
        aria-label="Kind"
        data={[{ value: "", label: "All kinds" }, ...kinds.map((k) => ({ value: k.value, label: k.plural }))]}
        value={params.kind ?? ""}
        onChange={(v) => update({ kind: (v || null) as MediaKind | null })}
        allowDeselect={false}
        w={150}
      />
      <Select
        aria-label="Sort"
        data={sorts}
        value={params.sort}
        onChange={(v) => v && update({ sort: v as LibraryParams["sort"] })}
        allowDeselect={false}
        w={170}
      />
      {self && (
        <Checkbox
          label="Uploaded by me"
          checked={params.uploadedBy === self.id}
          onChange={(e) => update({ uploadedBy: e.currentTarget.checked ? self.id : "" })}
        />
      )}
    </Group>
  );
}

/** ViewSwitch: cards or a table. */
export function ViewSwitch({ params, update }: { params: LibraryParams; update: SetLibraryParams }) {
  return (
    <SegmentedControl
      aria-label="View"
      size="xs"
      value={params.view}
      onChange={(v) => update({ view: v as LibraryParams["view"] })}
      data={[
        { value: "grid", label: <ViewLabel icon={<IconLayoutGrid size={14} aria-hidden />} text="Grid" /> },
        { value: "list", label: <ViewLabel icon={<IconList size={14} aria-hidden />} text="List" /> },
      ]}
    />
  );
}

function ViewLabel({ icon, text }: { icon: React.ReactNode; text: string }) {
  return (
    <Group gap={4} wrap="nowrap">
      {icon}
      <span>{text}</span>
    </Group>
  );
}
