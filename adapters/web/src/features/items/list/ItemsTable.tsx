// The table of one page of items: a checkbox per row and for the page,
// sortable column headers, a state badge, the name linking to the editor.
import { Anchor, Badge, Checkbox, Group, Table, UnstyledButton } from "@mantine/core";
import { IconArrowDown, IconArrowUp, IconSelector } from "@tabler/icons-react";
import { Link, useNavigate } from "react-router";
import type { Schemas } from "../../../api/client";
import { Cell } from "./cells";
import { STATE } from "./columns";
import { itemState, stateColors, stateHints, stateLabels } from "./itemState";
import { parseSort } from "./listParams";
import type { Prop } from "./props";

type Item = Schemas["Instance"];

interface Props {
  appId: string;
  items: Item[];
  /** The moment states are judged at. */
  at: number;
  columns: string[];
  byKey: Map<string, Prop>;
  sort: string;
  onSort: (sort: string) => void;
  selected: Map<string, Item>;
  onSelect: (items: Item[], on: boolean) => void;
}

function value(item: Item, p: Prop): unknown {
  if (p.meta) return (item as unknown as Record<string, unknown>)[p.key];
  return item.values[p.key.slice("values.".length)];
}

export function ItemsTable({ appId, items, at, columns, byKey, sort, onSort, selected, onSelect }: Props) {
  const navigate = useNavigate();
  const current = parseSort(sort);
  const onPage = items.filter((i) => selected.has(i.id)).length;
  const nameProp = byKey.get("name")!;

  const header = (key: string, label: string) => {
    const p = byKey.get(key);
    if (!p?.sortable) return <Table.Th key={key}>{label}</Table.Th>;
    const dir = current.key === key ? current.dir : undefined;
    const Icon = dir === "asc" ? IconArrowUp : dir === "desc" ? IconArrowDown : IconSelector;
    // Another column sorts ascending; the sorted one turns around.
    const next = `${key} ${dir === "asc" ? "desc" : "asc"}`;
    return (
      <Table.Th key={key} aria-sort={dir === "asc" ? "ascending" : dir === "desc" ? "descending" : undefined}>
        <UnstyledButton fz="sm" fw={700} onClick={() => onSort(next)} aria-label={`Sort by ${label}${dir === "asc" ? ", descending" : ""}`}>
          <Group gap={4} wrap="nowrap">
            <span>{label}</span>
            <Icon size={14} aria-hidden />
          </Group>
        </UnstyledButton>
      </Table.Th>
    );
  };

  return (
    // Rows stay one line high; a narrow screen scrolls the table sideways.
    <Table.ScrollContainer minWidth={480}>
      <Table highlightOnHover verticalSpacing={6} aria-label="Items" style={{ whiteSpace: "nowrap" }}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={40}>
              <Checkbox
                aria-label="Select all items on this page"
                checked={items.length > 0 && onPage === items.length}
                indeterminate={onPage > 0 && onPage < items.length}
                onChange={(e) => onSelect(items, e.currentTarget.checked)}
                disabled={items.length === 0}
              />
            </Table.Th>
            {header("name", nameProp.label)}
            {columns.map((k) => (k === STATE ? <Table.Th key={k}>State</Table.Th> : header(k, byKey.get(k)?.label ?? k)))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {items.map((item) => {
            const state = itemState(item, at);
            const to = `/apps/${appId}/items/${item.id}`;
            return (
              <Table.Tr
                key={item.id}
                bg={selected.has(item.id) ? "var(--mantine-primary-color-light)" : undefined}
                onClick={(e) => {
                  // A click on the row opens the item, unless it was on a control.
                  if ((e.target as HTMLElement).closest("a,button,input,label")) return;
                  navigate(to);
                }}
                style={{ cursor: "pointer" }}
              >
                <Table.Td>
                  <Checkbox aria-label={`Select ${item.name}`} checked={selected.has(item.id)} onChange={(e) => onSelect([item], e.currentTarget.checked)} />
                </Table.Td>
                <Table.Td>
                  <Anchor component={Link} to={to} size="sm" fw={500}>
                    {item.name || "(no name)"}
                  </Anchor>
                </Table.Td>
                {columns.map((k) => {
                  if (k === STATE) {
                    return (
                      <Table.Td key={k}>
                        <Badge color={stateColors[state]} variant="filled" size="sm" tt="none" miw="max-content" title={stateHints[state]}>
                          {stateLabels[state]}
                        </Badge>
                      </Table.Td>
                    );
                  }
                  const p = byKey.get(k);
                  return <Table.Td key={k}>{p ? <Cell prop={p} value={value(item, p)} /> : null}</Table.Td>;
                })}
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
