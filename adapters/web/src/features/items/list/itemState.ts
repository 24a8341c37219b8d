// The state of an item at a moment, from its dates, as the server and the
// SDKs compute it (domain/content/item.go, StateOf): deleted first, then
// archived (archivedAt reached), expired (removedAt reached), concept
// (never published, or unpublished), scheduled (publishedAt ahead),
// published. Nothing has to run for a scheduled date to take effect, so a
// list shows the state at the moment it was fetched.
import type { Schemas } from "../../../api/client";

export type ItemState = "published" | "concept" | "scheduled" | "expired" | "archived" | "deleted";

export interface ItemDates {
  publishedAt: number | null;
  removedAt: number | null;
  archivedAt: number | null;
  deletedAt: number | null;
}

/** itemState: the state of an item at `now` (epoch ms). */
export function itemState(item: ItemDates, now: number = Date.now()): ItemState {
  if (item.deletedAt !== null) return "deleted";
  if (item.archivedAt !== null && item.archivedAt <= now) return "archived";
  if (item.removedAt !== null && item.removedAt <= now) return "expired";
  if (item.publishedAt === null) return "concept";
  if (item.publishedAt > now) return "scheduled";
  return "published";
}

export const stateLabels: Record<ItemState, string> = {
  published: "Published",
  concept: "Concept",
  scheduled: "Scheduled",
  expired: "Expired",
  archived: "Archived",
  deleted: "Deleted",
};

/** Badge colours: white text on them passes WCAG AA at badge size. */
export const stateColors: Record<ItemState, string> = {
  published: "#1b6e2e",
  concept: "#495057",
  scheduled: "#1864ab",
  expired: "#a63a00",
  archived: "#5f3dc4",
  deleted: "#b02525",
};

export const stateHints: Record<ItemState, string> = {
  published: "Apps see it",
  concept: "Never published, or unpublished: apps do not see it",
  scheduled: "Apps will see it from its publication date",
  expired: "Its expiry date has passed: apps no longer see it",
  archived: "Archived: apps do not see it",
  deleted: "Deleted: it can be restored from the editor",
};

type Expression = Schemas["Expression"];

const op = (operation: Schemas["Operation"]["operation"], property: string, value: number | null): Expression =>
  value === null ? { operation, property, value: null } : { operation, property, value, type: "date" };
const and = (...operands: Expression[]): Expression => ({ condition: "and", operands });
const or = (...operands: Expression[]): Expression => ({ condition: "or", operands });

/**
 * stateFilter: a metaSearch tree that matches the items in `state` at
 * `now`, the mirror of itemState. Deleted items match only when a tree
 * names deletedAt, so the others never list them.
 */
export function stateFilter(state: ItemState, now: number): Expression {
  const notArchived = or(op("=", "archivedAt", null), op(">", "archivedAt", now));
  const notExpired = or(op("=", "removedAt", null), op(">", "removedAt", now));
  switch (state) {
    case "deleted":
      return op("!=", "deletedAt", null);
    case "archived":
      return op("<=", "archivedAt", now);
    case "expired":
      return and(notArchived, op("<=", "removedAt", now));
    case "concept":
      return and(notArchived, notExpired, op("=", "publishedAt", null));
    case "scheduled":
      return and(notArchived, notExpired, op(">", "publishedAt", now));
    case "published":
      return and(notArchived, notExpired, op("<=", "publishedAt", now));
  }
}
