import { useQueryClient, type QueryKey } from "@tanstack/react-query";
import { useEffect, useRef, useSyncExternalStore } from "react";
import * as session from "../../auth/session";
import { listen, publish, recent, status } from "./store";
import { follow, type ContentChange, type LiveStatus } from "./stream";

export type { ContentChange, LiveStatus };

/** The query keys of content, which a reset reloads all of. */
const contentKeys = new Set(["modules", "module", "items", "item", "history"]);

/** Invalidations wait this long, so that a burst of changes (a bulk import) reloads a list once. */
const coalesce = 150;

/** keysOf lists the queries a change makes stale. */
export function keysOf(c: ContentChange): QueryKey[] {
  if (c.kind === "module") {
    return [["modules", c.app], ["module", c.module], ["items", c.module]];
  }
  const keys: QueryKey[] = [["items", c.module]];
  if (c.item) keys.push(["item", c.item], ["history", c.item]);
  return keys;
}

/**
 * useLiveContent follows the app's content changes while the user is
 * signed in (mount it once: the shell does): each change makes the lists,
 * items and histories it concerns stale (TanStack Query refetches those
 * on screen) and goes to the screens that listen (useContentEvent).
 */
export function useLiveContent(appId: string | undefined) {
  const signedIn = useSyncExternalStore(session.subscribe, session.signedIn);
  const queryClient = useQueryClient();
  useEffect(() => {
    if (!appId || !signedIn) {
      status.set("off");
      return;
    }
    const stop = new AbortController();
    const stale = new Map<string, QueryKey>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      timer = undefined;
      const keys = [...stale.values()];
      stale.clear();
      keys.forEach((queryKey) => void queryClient.invalidateQueries({ queryKey }));
    };
    recent.set([]);
    void follow(
      appId,
      {
        onChange(c) {
          keysOf(c).forEach((k) => stale.set(JSON.stringify(k), k));
          timer ??= setTimeout(flush, coalesce);
          publish(c);
        },
        onReset() {
          void queryClient.invalidateQueries({ predicate: (q) => contentKeys.has(String(q.queryKey[0])) });
        },
        // A stream being stopped (the app changed) must not overwrite
        // the status of the one that replaces it.
        onStatus: (s) => {
          if (!stop.signal.aborted) status.set(s);
        },
      },
      stop.signal,
    );
    return () => {
      stop.abort();
      if (timer) clearTimeout(timer);
      status.set("off");
    };
  }, [appId, signedIn, queryClient]);
}

/**
 * useContentEvent calls handler with each change of the app's content as
 * it arrives (its own saves included: compare `revision` with what the
 * screen shows). The latest handler is called; it need not be stable.
 */
export function useContentEvent(handler: (change: ContentChange) => void) {
  const ref = useRef(handler);
  useEffect(() => {
    ref.current = handler;
  });
  useEffect(() => listen((c) => ref.current(c)), []);
}

/** useLiveStatus is the stream's status. */
export function useLiveStatus(): LiveStatus {
  return useSyncExternalStore(status.subscribe, status.get);
}

/** useRecentChanges lists the last changes received, newest first. */
export function useRecentChanges(): readonly ContentChange[] {
  return useSyncExternalStore(recent.subscribe, recent.get);
}
