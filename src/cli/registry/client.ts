// A client of one MCP Registry (the official one or any registry serving the same API): the server
// list with `search`, `version` and its `cursor` pagination, one server version, and all versions of
// a server. Every answer is bounded in size and time and checked against server-json.ts before it is
// used; a registry that is down, slow or answers something else is a RegistryError naming it.

import type { z } from 'zod';
import { describeIssues, serverListSchema, serverResponseSchema, type ServerResponse } from './server-json.js';

export const OFFICIAL_REGISTRY = 'https://registry.modelcontextprotocol.io';

/** An answer bigger than this is not a registry's page of server.json documents. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 15_000;
/** Pages `search` follows at most: a cursor that never ends is the registry's bug, not a loop of ours. */
const MAX_PAGES = 20;

/** The registry could not be asked, or its answer was not the registry API's. */
export class RegistryError extends Error {}

export class RegistryClient {
  readonly url: string;
  readonly #timeoutMs: number;

  constructor(url: string, timeoutMs = DEFAULT_TIMEOUT_MS) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new RegistryError(`registry ${JSON.stringify(url)} is not a URL (e.g. ${OFFICIAL_REGISTRY})`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
      throw new RegistryError(`registry ${url}: expected an http or https URL`);
    this.url = parsed.href.replace(/\/+$/, '');
    this.#timeoutMs = timeoutMs;
  }

  /** The latest version of every server whose name contains `query`, up to `limit` of them. */
  async search(query: string, limit = 100): Promise<ServerResponse[]> {
    const found: ServerResponse[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES && found.length < limit; page++) {
      const params = new URLSearchParams({ search: query, version: 'latest', limit: String(Math.min(100, limit - found.length)) });
      if (cursor !== undefined) params.set('cursor', cursor);
      const list = await this.#get(`/v0.1/servers?${params.toString()}`, serverListSchema, 'a server list');
      if (list === undefined) throw new RegistryError(`registry ${this.url}: no server list at /v0.1/servers (is it an MCP Registry?)`);
      found.push(...list.servers);
      const next = list.metadata?.nextCursor;
      if (next === undefined || next === null || next === '' || list.servers.length === 0) break;
      cursor = next;
    }
    return found.slice(0, limit);
  }

  /** One version of `name` (`latest` for the newest), or undefined when the registry has no such server or version. */
  async version(name: string, version: string): Promise<ServerResponse | undefined> {
    const found = await this.#get(
      `/v0.1/servers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`,
      serverResponseSchema,
      'a server version',
    );
    if (found !== undefined && found.server.name !== name)
      throw new RegistryError(`registry ${this.url}: asked for ${name}, answered ${JSON.stringify(found.server.name)}`);
    return found;
  }

  /** Every version of `name`, newest first as the registry lists them; undefined when it has no such server. */
  async versions(name: string): Promise<ServerResponse[] | undefined> {
    const list = await this.#get(`/v0.1/servers/${encodeURIComponent(name)}/versions`, serverListSchema, 'a version list');
    return list?.servers.filter((s) => s.server.name === name);
  }

  /** GETs `path` and checks the JSON answer; a 404 is undefined. */
  async #get<T extends z.ZodType>(path: string, schema: T, what: string): Promise<z.infer<T> | undefined> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${path}`, {
        headers: { accept: 'application/json' },
        redirect: 'follow',
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why =
        (err as Error).name === 'TimeoutError'
          ? `no answer within ${this.#timeoutMs} ms`
          : (cause?.code ?? cause?.message ?? (err as Error).message);
      throw new RegistryError(`registry ${this.url} cannot be reached: ${why}`);
    }
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new RegistryError(`registry ${this.url} answered HTTP ${response.status} for ${path.split('?')[0]}`);
    }
    const text = await boundedText(response, this.url);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new RegistryError(`registry ${this.url} answered something that is not JSON for ${path.split('?')[0]}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new RegistryError(`registry ${this.url} answered ${what} that fails the server.json schema: ${describeIssues(parsed.error)}`);
    return parsed.data;
  }
}

/** The body as text, refused past MAX_BODY_BYTES (read as it arrives, never buffered whole first). */
async function boundedText(response: Response, url: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    await response.body?.cancel();
    throw new RegistryError(`registry ${url}: an answer of ${declared} bytes is larger than ${MAX_BODY_BYTES}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body === null) return '';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new RegistryError(`registry ${url}: an answer larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
