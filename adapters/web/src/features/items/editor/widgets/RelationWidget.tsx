// A relation picker: search the target module's items by name, pick one
// (single relation) or several (multiple relation); the chosen ones show
// as chips with their names, never bare ids.
import { MultiSelect } from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { searchItems } from "../api";
import { str, type WidgetProps } from "./props";

export function RelationWidget(p: WidgetProps & { multiple: boolean }) {
  const ids = p.multiple
    ? Array.isArray(p.value)
      ? p.value.filter((x): x is string => typeof x === "string")
      : []
    : str(p.value)
      ? [str(p.value)]
      : [];
  const modules = p.field.rules.module ? [p.field.rules.module] : p.appModules;
  const [search, setSearch] = useState("");
  const [text] = useDebouncedValue(search, 200);
  const scope = modules.length === 1 ? modules[0] : p.appId;

  const found = useQuery({
    queryKey: ["items", scope, "pick", modules, text],
    queryFn: () => searchItems({ modules, text }),
    enabled: modules.length > 0 && !p.readOnly,
    placeholderData: keepPreviousData,
  });
  const chosen = useQuery({
    queryKey: ["items", scope, "names", modules, ids],
    queryFn: () => searchItems({ modules, ids, limit: Math.max(ids.length, 1) }),
    enabled: ids.length > 0 && modules.length > 0,
    placeholderData: keepPreviousData,
  });

  const names = new Map<string, string>();
  for (const f of chosen.data ?? []) names.set(f.id, f.name);
  for (const f of found.data ?? []) names.set(f.id, f.name);
  const data = [
    ...ids.map((id) => ({ value: id, label: names.get(id) ?? (chosen.isPending ? "Loading…" : `Unknown or deleted item (${id})`) })),
    ...(found.data ?? []).filter((f) => !ids.includes(f.id)).map((f) => ({ value: f.id, label: f.name })),
  ];

  return (
    <MultiSelect
      id={p.id}
      label={p.label}
      description={p.description ?? (p.multiple ? "Search items by name; pick several" : "Search items by name; pick one")}
      withAsterisk={p.required}
      data={data}
      value={ids}
      onChange={(v) => {
        if (p.multiple) p.onChange(v.length ? v : null);
        else p.onChange(v.length ? v[v.length - 1] : null);
        setSearch("");
      }}
      searchable
      searchValue={search}
      onSearchChange={setSearch}
      filter={({ options }) => options}
      nothingFoundMessage={found.isFetching ? "Searching…" : "No item found"}
      hidePickedOptions
      maxValues={p.multiple ? undefined : 2}
      clearable={!p.readOnly}
      error={p.error}
      readOnly={p.readOnly}
    />
  );
}
