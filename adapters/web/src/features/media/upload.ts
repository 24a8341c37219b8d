// Uploads and replacements send multipart bodies with XMLHttpRequest,
// not fetch: only XHR reports how many bytes have gone up, which the
// progress bars show. Like the API client, a 401 renews the session once
// and sends again; a refusal becomes an ApiError with the API's message.
import * as session from "../../auth/session";
import { ApiError } from "../../lib/errors";
import type { MediaFile } from "./api";

/** Progress: the share of the bytes sent, 0 to 1. */
export type OnProgress = (fraction: number) => void;

interface Sent {
  status: number;
  statusText: string;
  body: string;
  retryAfter: string | null;
}

function sendOnce(method: string, url: string, form: FormData, token: string | null, onProgress?: OnProgress, signal?: AbortSignal) {
  return new Promise<Sent>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    if (token) xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress?.(e.loaded / e.total);
    };
    xhr.onload = () =>
      resolve({ status: xhr.status, statusText: xhr.statusText, body: xhr.responseText, retryAfter: xhr.getResponseHeader("Retry-After") });
    xhr.onerror = () => reject(new TypeError("The upload could not reach the server"));
    xhr.onabort = () => reject(new DOMException("The upload was cancelled", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort(), { once: true });
    xhr.send(form);
  });
}

function errorOf(r: Sent): ApiError {
  let e: { status?: number; message?: string; extra?: Record<string, unknown> } | undefined;
  try {
    e = (JSON.parse(r.body) as { error?: typeof e }).error;
  } catch {
    e = undefined;
  }
  const retry = Number(r.retryAfter);
  return new ApiError(
    e?.status ?? r.status,
    e?.message ?? `${r.status} ${r.statusText}`,
    e?.extra ?? {},
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}

async function send(method: string, url: string, form: () => FormData, onProgress?: OnProgress, signal?: AbortSignal): Promise<MediaFile> {
  let r = await sendOnce(method, url, form(), await session.token(), onProgress, signal);
  if (r.status === 401) {
    const t = await session.expired();
    if (t) r = await sendOnce(method, url, form(), t, onProgress, signal);
  }
  if (r.status < 200 || r.status > 299) throw errorOf(r);
  onProgress?.(1);
  return JSON.parse(r.body) as MediaFile;
}

export interface UploadTo {
  app: string;
  /** "" is the top level. */
  folder: string;
  tags?: string[];
}

/** uploadMedia stores file in the app's library (POST /api/media/file). */
export function uploadMedia(file: File, to: UploadTo, onProgress?: OnProgress, signal?: AbortSignal): Promise<MediaFile> {
  return send(
    "POST",
    "/api/media/file",
    () => {
      const form = new FormData();
      form.append("app", to.app);
      form.append("name", file.name);
      if (to.folder) form.append("folder", to.folder);
      for (const t of to.tags ?? []) form.append("tags", t);
      form.append("file", file, file.name); // the part `file` goes last
      return form;
    },
    onProgress,
    signal,
  );
}

/** replaceMedia sends new bytes of the same kind for a file (PUT /api/media/file/{id}/content). */
export function replaceMedia(id: string, file: File, onProgress?: OnProgress, signal?: AbortSignal): Promise<MediaFile> {
  return send(
    "PUT",
    `/api/media/file/${encodeURIComponent(id)}/content`,
    () => {
      const form = new FormData();
      form.append("file", file, file.name);
      return form;
    },
    onProgress,
    signal,
  );
}
