// The live stream of an app's content changes (GET
// /api/generalcontent/events, Server-Sent Events). EventSource cannot send
// the Authorization header and the token must never be in a URL, so this
// reads the stream with fetch: the one hand-written API call of the CMS.
// It reconnects with back-off, resumes with Last-Event-ID, renews the
// session once on a 401 and stops when the user is signed out.
import type { Schemas } from "../../api/client";
import * as session from "../../auth/session";

export type ContentChange = Schemas["ContentChange"];

/** LiveStatus is what the stream is doing, for the shell's indicator. */
export type LiveStatus = "off" | "connecting" | "connected" | "reconnecting" | "refused";

export interface LiveHandlers {
  /** A change, in log order. */
  onChange(change: ContentChange): void;
  /** Changes were missed: reload everything shown. */
  onReset(): void;
  onStatus(status: LiveStatus): void;
}

const eventsPath = "/api/generalcontent/events";
/** The server says something every 15 s; this much silence is a dead stream. */
const quietLimit = 45_000;
const firstRetry = 1_000;
const maxRetry = 30_000;

/** One message of the stream. */
interface Message {
  event: string;
  data: string;
  id: string | null; // null: the message set no id
}

/**
 * follow reads app's changes until signal aborts or the user is signed out;
 * it resolves then. Failures are retried with exponential back-off (or the
 * server's Retry-After); a refusal (403) stops it.
 */
export async function follow(app: string, h: LiveHandlers, signal: AbortSignal): Promise<void> {
  let lastId: string | null = null;
  let failures = 0;
  let connectedOnce = false;
  let renewed = false;
  while (!signal.aborted) {
    h.onStatus(connectedOnce || failures > 0 ? "reconnecting" : "connecting");
    let wait: number;
    try {
      const token = await session.token();
      if (!token || signal.aborted) break; // signed out
      const res = await open(app, token, lastId, signal);
      if (res.status === 401) {
        // Renew the session once; a second 401 in a row means signed out.
        if (!renewed && (await session.expired())) {
          renewed = true;
          continue;
        }
        break;
      }
      renewed = false;
      if (res.status === 403 || res.status === 400 || res.status === 404) {
        h.onStatus("refused");
        return;
      }
      if (!res.ok || !res.body) {
        wait = retryAfter(res) ?? backoff(failures++);
      } else {
        if (connectedOnce && lastId === null) h.onReset(); // nothing to resume from: changes may be missed
        connectedOnce = true;
        failures = 0;
        h.onStatus("connected");
        await read(res.body, signal, (m) => {
          if (m.event === "content") {
            if (m.id !== null) lastId = m.id;
            const change = parse(m.data);
            if (change) h.onChange(change);
          } else if (m.event === "reset") {
            lastId = m.id; // where to resume after reloading (null: from now)
            h.onReset();
          }
        });
        if (signal.aborted) break;
        // The server ended the stream (it shuts down, the token or the
        // rights changed): come back soon, at a varying moment.
        wait = backoff(failures++);
      }
    } catch {
      if (signal.aborted) break;
      wait = backoff(failures++); // network failure, or a dead stream
    }
    h.onStatus("reconnecting");
    await sleep(wait, signal);
  }
  h.onStatus("off");
}

function open(app: string, token: string, lastId: string | null, signal: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: "text/event-stream" };
  if (lastId !== null) headers["Last-Event-ID"] = lastId;
  return fetch(`${eventsPath}?app=${encodeURIComponent(app)}`, { headers, signal, cache: "no-store" });
}

/** backoff is the wait after n failures in a row: 1 s doubling to 30 s, ±25 %. */
function backoff(n: number): number {
  const base = Math.min(maxRetry, firstRetry * 2 ** n);
  return base * (0.75 + Math.random() / 2);
}

function retryAfter(res: Response): number | undefined {
  const s = Number(res.headers.get("Retry-After"));
  return Number.isFinite(s) && s > 0 ? s * 1000 : undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

function parse(data: string): ContentChange | undefined {
  try {
    return JSON.parse(data) as ContentChange;
  } catch {
    return undefined;
  }
}

/**
 * read parses a text/event-stream body (the WHATWG rules: lines end with
 * CRLF, LF or CR; a blank line dispatches; `:` starts a comment) and calls
 * onMessage for each message. It throws when the stream stays silent for
 * quietLimit, and returns when it ends.
 */
async function read(body: ReadableStream<Uint8Array>, signal: AbortSignal, onMessage: (m: Message) => void) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let quiet = setTimeout(() => reader.cancel(new Error("the live stream went quiet")), quietLimit);
  const stop = () => reader.cancel();
  signal.addEventListener("abort", stop, { once: true });
  let buffer = "";
  let msg: Message = { event: "", data: "", id: null };
  let hasData = false;
  const line = (l: string) => {
    if (l === "") {
      if (hasData || msg.event) onMessage({ ...msg, event: msg.event || "message" });
      msg = { event: "", data: "", id: null };
      hasData = false;
      return;
    }
    if (l.startsWith(":")) return;
    const colon = l.indexOf(":");
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? "" : l.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        msg.event = value;
        break;
      case "data":
        msg.data = hasData ? `${msg.data}\n${value}` : value;
        hasData = true;
        break;
      case "id":
        if (!value.includes("\0")) msg.id = value;
        break;
    }
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      clearTimeout(quiet);
      quiet = setTimeout(() => reader.cancel(new Error("the live stream went quiet")), quietLimit);
      let text = buffer + decoder.decode(value, { stream: true });
      // A CR at the very end may be the first half of a CRLF: keep it.
      const carry = text.endsWith("\r") ? "\r" : "";
      if (carry) text = text.slice(0, -1);
      const parts = text.split(/\r\n|\r|\n/);
      buffer = (parts.pop() ?? "") + carry;
      parts.forEach(line);
    }
  } finally {
    clearTimeout(quiet);
    signal.removeEventListener("abort", stop);
  }
}
