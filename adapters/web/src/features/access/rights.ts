// What the signed-in user may do, computed from their effective rights
// (GET /api/authentication/right) as the server computes it: a right on
// an app covers its modules and items, on a module its items, on an item
// that item. Administrators may do everything. The UI hides or disables
// what this refuses, and says why; the API enforces it again.
import type { Schemas } from "../../api/client";

export type Permission = "read" | "write" | "update" | "delete" | "manage";

export interface Scope {
  app: string;
  module?: string;
  item?: string;
}

export interface Rights {
  admin: boolean;
  entries: Schemas["Right"][];
}

export function can(rights: Rights | undefined, perm: Permission, scope: Scope): boolean {
  if (!rights) return false;
  if (rights.admin) return true;
  return rights.entries.some((e) => {
    if (e.app !== scope.app || !e.permissions.includes(perm)) return false;
    if (!e.module && !e.item) return true; // the whole app
    if (e.module) return e.module === scope.module; // a module and its items
    return scope.item !== undefined && e.item === scope.item;
  });
}

/** canSomewhere: the user holds perm on the app or on something in it. */
export function canSomewhere(rights: Rights | undefined, perm: Permission, app: string): boolean {
  if (!rights) return false;
  return rights.admin || rights.entries.some((e) => e.app === app && e.permissions.includes(perm));
}

const what: Record<Permission, string> = {
  read: "read",
  write: "create",
  update: "change",
  delete: "delete",
  manage: "manage rights on",
};

/** whyNot explains a disabled action in words. */
export function whyNot(perm: Permission, scope: Scope): string {
  const on = scope.item ? "this item" : scope.module ? "this module" : "this app";
  return `You may not ${what[perm]} ${perm === "write" && scope.module ? "items in " + on : on}: it needs the “${perm}” right. Ask an administrator.`;
}
