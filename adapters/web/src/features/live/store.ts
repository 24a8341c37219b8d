// What the live stream tells the rest of the CMS: its status (for the
// shell's indicator), the recent changes (listed by the indicator) and
// every change as it comes (useContentEvent). One stream at a time: the
// shell mounts useLiveContent once.
import type { ContentChange, LiveStatus } from "./stream";

type Listener = () => void;

function store<T>(initial: T) {
  let value = initial;
  const listeners = new Set<Listener>();
  return {
    get: () => value,
    set(v: T) {
      value = v;
      listeners.forEach((l) => l());
    },
    subscribe(l: Listener) {
      listeners.add(l);
      return () => {
        listeners.delete(l);
      };
    },
  };
}

export const status = store<LiveStatus>("off");

/** The last changes received, newest first. */
export const recent = store<readonly ContentChange[]>([]);
const keepRecent = 8;

const handlers = new Set<(c: ContentChange) => void>();

/** publish hands a change to the screens that listen and to the recent list. */
export function publish(c: ContentChange) {
  recent.set([c, ...recent.get()].slice(0, keepRecent));
  handlers.forEach((h) => {
    try {
      h(c);
    } catch (err) {
      console.error("a live change handler failed", err);
    }
  });
}

export function listen(h: (c: ContentChange) => void): () => void {
  handlers.add(h);
  return () => {
    handlers.delete(h);
  };
}
