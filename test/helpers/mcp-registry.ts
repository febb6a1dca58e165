// An MCP Registry on 127.0.0.1 for the registry commands' tests: the public API's read paths
// (GET /v0.1/servers and /v0/servers with search, version and cursor pagination; /servers/{name}/versions
// and /servers/{name}/versions/{version}, `latest` included) answering with the registry's shapes
// ({servers, metadata.nextCursor}, {server, _meta["io.modelcontextprotocol.registry/official"]}).
// Documents are served as given, unchecked, so a test can serve one that fails the schema; `garbage`
// makes every answer something that is not JSON.

import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

const OFFICIAL = 'io.modelcontextprotocol.registry/official';

export interface Published {
  /** The server.json document, served as is. */
  readonly server: Record<string, unknown>;
  readonly status?: 'active' | 'deprecated' | 'deleted';
  readonly publishedAt?: string;
}

export interface LocalMcpRegistry {
  readonly url: string;
  /** Every request's path and query, in order. */
  readonly requests: string[];
  /** Publishes one more version (the latest of its name from now on). */
  publish(entry: Published): void;
  /** Answers every request with a body that is not JSON. */
  garbage: boolean;
  close(): Promise<void>;
}

export async function startMcpRegistry(entries: readonly Published[], pageSize = 2): Promise<LocalMcpRegistry> {
  const published: Published[] = [];
  let clock = Date.parse('2025-09-01T00:00:00Z');
  const publish = (entry: Published): void => {
    clock += 86_400_000;
    published.push({ ...entry, publishedAt: entry.publishedAt ?? new Date(clock).toISOString() });
  };
  for (const entry of entries) publish(entry);
  const nameOf = (e: Published): string => String(e.server.name);
  const versionOf = (e: Published): string => String(e.server.version);
  const isLatest = (e: Published): boolean => published.filter((p) => nameOf(p) === nameOf(e)).at(-1) === e;
  const response = (e: Published): Record<string, unknown> => ({
    server: e.server,
    _meta: {
      [OFFICIAL]: { status: e.status ?? 'active', publishedAt: e.publishedAt, updatedAt: e.publishedAt, isLatest: isLatest(e) },
    },
  });
  const requests: string[] = [];
  const registry: LocalMcpRegistry = {
    url: '',
    requests,
    publish,
    garbage: false,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://registry.test');
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (registry.garbage) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>Service temporarily unavailable</html>');
      return;
    }
    const match = /^\/v0(?:\.1)?\/servers(?:\/([^/]+)\/versions(?:\/([^/]+))?)?$/.exec(url.pathname);
    if (req.method !== 'GET' || match === null) return send(404, { error: 'Not found' });
    const [, encodedName, encodedVersion] = match;
    const live = published.filter((e) => e.status !== 'deleted');
    if (encodedName === undefined) {
      const search = url.searchParams.get('search')?.toLowerCase();
      const version = url.searchParams.get('version');
      const limit = Math.min(100, Number(url.searchParams.get('limit') ?? pageSize) || pageSize, pageSize);
      const all = live.filter(
        (e) =>
          (search === undefined || nameOf(e).toLowerCase().includes(search)) &&
          (version === null || (version === 'latest' ? isLatest(e) : versionOf(e) === version)),
      );
      const cursor = url.searchParams.get('cursor');
      const start = cursor === null ? 0 : Number(Buffer.from(cursor, 'base64url').toString());
      const page = all.slice(start, start + limit);
      const next = start + limit < all.length ? Buffer.from(String(start + limit)).toString('base64url') : undefined;
      return send(200, { servers: page.map(response), metadata: { count: page.length, ...(next !== undefined && { nextCursor: next }) } });
    }
    const name = decodeURIComponent(encodedName);
    const versions = live.filter((e) => nameOf(e) === name);
    if (versions.length === 0) return send(404, { error: 'Server not found' });
    if (encodedVersion === undefined)
      return send(200, { servers: [...versions].reverse().map(response), metadata: { count: versions.length } });
    const version = decodeURIComponent(encodedVersion);
    const found = version === 'latest' ? versions.at(-1) : versions.find((e) => versionOf(e) === version);
    if (found === undefined) return send(404, { error: 'Server version not found' });
    send(200, response(found));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  (registry as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return registry;
}
