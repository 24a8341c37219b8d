// PageNav is Mantine's Pagination with names for its controls, so that a
// screen reader says "Next page" rather than an arrow: every paged list
// uses it.
import { Pagination, type PaginationProps } from "@mantine/core";

const controls: Record<string, string> = { first: "First page", previous: "Previous page", next: "Next page", last: "Last page" };

export function PageNav(props: PaginationProps) {
  return (
    <Pagination
      getControlProps={(c) => ({ "aria-label": controls[c] })}
      getItemProps={(n) => ({ "aria-label": `Page ${n}` })}
      {...props}
    />
  );
}
