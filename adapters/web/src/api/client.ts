// The API client, generated from the server's OpenAPI document
// (src/api/schema.d.ts; `make web-client` regenerates it). Every request
// carries the session's access token; a 401 renews the session once and
// retries the request.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";
import * as session from "../auth/session";

export type Schemas = components["schemas"];

const retries = new Map<string, Request>();

const auth: Middleware = {
  async onRequest({ request, id }) {
    const t = await session.token();
    if (t) request.headers.set("Authorization", `Bearer ${t}`);
    retries.set(id, request.clone());
    return request;
  },
  async onResponse({ response, id }) {
    const again = retries.get(id);
    retries.delete(id);
    if (response.status !== 401 || !again) return response;
    const t = await session.expired();
    if (!t) return response;
    again.headers.set("Authorization", `Bearer ${t}`);
    return fetch(again);
  },
  onError({ id }) {
    retries.delete(id);
  },
};

export const api = createClient<paths>({ baseUrl: "" });
api.use(auth);
