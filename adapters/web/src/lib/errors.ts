// The API answers every failure as HALO's error body:
// {"error": {"status", "message", "extra", "type": "HaloError"}}.
// ApiError carries it to the screens, which show `message` and, when
// `extra.field` names a field, show it at that field.

export class ApiError extends Error {
  readonly status: number;
  readonly extra: Record<string, unknown>;
  readonly retryAfter?: number;

  constructor(status: number, message: string, extra: Record<string, unknown> = {}, retryAfter?: number) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.extra = extra;
    this.retryAfter = retryAfter;
  }

  /** The field the API named, when it named one. */
  get field(): string | undefined {
    return typeof this.extra.field === "string" ? this.extra.field : undefined;
  }
}

interface HaloErrorBody {
  error?: { status?: number; message?: string; extra?: Record<string, unknown> };
}

/** toApiError turns a failed response's body into an ApiError. */
export function toApiError(response: Response, body: unknown): ApiError {
  const e = (body as HaloErrorBody | undefined)?.error;
  const retry = Number(response.headers.get("Retry-After"));
  return new ApiError(
    e?.status ?? response.status,
    e?.message ?? `${response.status} ${response.statusText}`,
    e?.extra ?? {},
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}

/**
 * unwrap returns an openapi-fetch result's data, or throws its error as an
 * ApiError.
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) {
    throw toApiError(result.response, result.error);
  }
  return result.data as T;
}

/** describe says what went wrong in words for a person. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) {
    switch (err.status) {
      case 429:
        return `${err.message}${err.retryAfter ? ` Try again in ${err.retryAfter} s.` : ""}`;
      case 503:
        return `The server is busy or unavailable: ${err.message}`;
      default:
        return err.message;
    }
  }
  if (err instanceof TypeError) return "The server cannot be reached. Check your connection.";
  return err instanceof Error ? err.message : String(err);
}
