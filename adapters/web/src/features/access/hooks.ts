import { useQuery } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../lib/errors";
import { can, type Permission, type Rights, type Scope } from "./rights";

export function useSelf() {
  return useQuery({
    queryKey: ["self"],
    queryFn: async () => unwrap(await api.GET("/api/core/user/self")),
    staleTime: 60_000,
  });
}

export function useApps() {
  return useQuery({
    queryKey: ["apps"],
    queryFn: async () => unwrap(await api.GET("/core-api/app")),
    staleTime: 60_000,
  });
}

/** useRights: the signed-in user's rights (all apps). */
export function useRights(): Rights | undefined {
  const self = useSelf();
  const list = useQuery({
    queryKey: ["rights", "self"],
    queryFn: async () => unwrap(await api.GET("/api/authentication/right")),
    staleTime: 30_000,
    enabled: self.data !== undefined && !self.data.admin,
  });
  if (!self.data) return undefined;
  if (self.data.admin) return { admin: true, entries: [] };
  if (!list.data) return undefined;
  return { admin: false, entries: list.data.rights };
}

/** useCan answers whether the user may do perm on scope (false while loading). */
export function useCan(perm: Permission, scope: Scope): boolean {
  return can(useRights(), perm, scope);
}
