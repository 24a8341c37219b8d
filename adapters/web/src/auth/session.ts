// The CMS session. The access token lives in this module's memory only;
// the refresh token is an HttpOnly cookie the page cannot read, set by
// /api/cms/session. Nothing is put in localStorage, URLs or logs.
//
// Refreshes are single-flight within the page and serialised across tabs
// with the Web Locks API: the server rotates refresh tokens and treats a
// spent one presented again as theft, so two tabs must never refresh with
// the same cookie.
import createClient from "openapi-fetch";
import type { paths } from "../api/schema";
import { ApiError, toApiError } from "../lib/errors";

const bare = createClient<paths>({ baseUrl: "" });
const csrf = { "X-CMS-Session": "1" } as const;

interface Access {
  token: string;
  expiresAt: number; // epoch ms
}

let access: Access | null = null;
let inflight: Promise<Access | null> | null = null;
let version = 0;
const listeners = new Set<() => void>();

function set(a: Access | null) {
  access = a;
  version++;
  // Screens hear of it in a task of their own: a restored session's
  // re-render must not hold up the requests waiting for the token.
  setTimeout(() => listeners.forEach((l) => l()), 0);
}

/** subscribe and snapshot are for useSyncExternalStore. */
export function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
export function signedIn(): boolean {
  return access !== null;
}
export function sessionVersion(): number {
  return version;
}

function fromBody(body: { accessToken: string; expiresIn: number }): Access {
  return { token: body.accessToken, expiresAt: Date.now() + body.expiresIn };
}

export async function signIn(username: string, password: string): Promise<void> {
  const { data, error, response } = await bare.POST("/api/cms/session", {
    params: { header: csrf },
    body: { username, password },
  });
  if (!data) throw toApiError(response, error);
  set(fromBody(data));
}

async function doRefresh(): Promise<Access | null> {
  const run = async () => {
    const { data, error, response } = await bare.POST("/api/cms/session/refresh", { params: { header: csrf } });
    if (response.status === 401) return null;
    if (!data) throw toApiError(response, error);
    return fromBody(data);
  };
  const locks = typeof navigator !== "undefined" ? navigator.locks : undefined;
  const next = locks ? await locks.request("halocms-session-refresh", run) : await run();
  set(next);
  return next;
}

/** refresh renews the access token (once at a time); null: signed out. */
export function refresh(): Promise<Access | null> {
  inflight ??= doRefresh().finally(() => {
    inflight = null;
  });
  return inflight;
}

/** restore picks the session up after a reload, from the cookie. */
export async function restore(): Promise<boolean> {
  if (access) return true;
  try {
    return (await refresh()) !== null;
  } catch {
    return false;
  }
}

/** ready: signed in, or the session restored from the cookie (once, shared). */
export function ready(): Promise<boolean> {
  return restore();
}

/** token answers a usable access token, renewing it shortly before expiry. */
export async function token(): Promise<string | null> {
  if (access && access.expiresAt - Date.now() > 30_000) return access.token;
  if (!access) return null;
  return (await refresh())?.token ?? null;
}

/** expired: the API refused the token; forget it and try the cookie once. */
export async function expired(): Promise<string | null> {
  return (await refresh())?.token ?? null;
}

export async function signOut(): Promise<void> {
  try {
    const { response, error } = await bare.DELETE("/api/cms/session", { params: { header: csrf } });
    if (!response.ok) throw toApiError(response, error);
  } finally {
    set(null);
  }
}

export { ApiError };
