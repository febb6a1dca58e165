// `mcpgate serve --workers 3 --redis …` for the e2e tests of one host's workers (workers.test.ts,
// workers-metrics.test.ts): the primary started on a real redis-server, waited for until every
// worker is listed in `/status`, and the status rows read back.
import assert from 'node:assert/strict';
import { request as httpRequest, type Agent } from 'node:http';
import { Readable } from 'node:stream';
import { GatewayProcess, fixtureServer, until, writeConfig, type TempDir } from './gateway.js';
import { makeToken, writeRules } from './http.js';
import type { RedisServer } from './redis.js';

export interface WorkerRow {
  id: string;
  pid: number;
  address: string;
  sessions: number;
}

/** Every request on a connection of its own: node:cluster hands each to the next worker (a non-sticky spread). */
export const freshConnection = (url: string | URL, init?: RequestInit): Promise<Response> => {
  const headers = new Headers(init?.headers);
  headers.set('connection', 'close');
  return fetch(url, { ...init, headers });
};

/** The admin of the workers' rules (`ops`): /status is the operators', and the console signs in with it. */
export const ADMIN = makeToken();

/** The cluster's workers as `/status` lists them (from whichever worker answers; asked as the admin). */
export async function workersOf(base: string): Promise<WorkerRow[]> {
  const body = (await (
    await fetch(`${base}/status`, { headers: { authorization: `Bearer ${ADMIN.token}`, connection: 'close' } })
  ).json()) as { cluster?: { workers?: WorkerRow[] } };
  return body.cluster?.workers ?? [];
}

export interface WorkersHost {
  gw: GatewayProcess;
  /** The shared port's `/mcp`. */
  url: string;
  /** The shared port's origin. */
  base: string;
}

/**
 * Three workers in front of the kitchen-sink fixture as `sink`, alice (the token `hash` is hers)
 * allowed it, `ops` the admin (ADMIN); resolves once the primary has said every worker listens and all three are listed.
 */
export function startThreeWorkers(dir: TempDir, redis: RedisServer, hash: string): Promise<WorkersHost> {
  return startWorkers(dir, redis, hash, 3);
}

/** As startThreeWorkers, with `count` workers. */
export async function startWorkers(dir: TempDir, redis: RedisServer, hash: string, count: number): Promise<WorkersHost> {
  const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
  const rules = await writeRules(dir, {
    agents: { alice: { allow: { servers: ['sink'] }, tokens: [hash] } },
    admins: { ops: { tokens: [ADMIN.hash] } },
  });
  const gw = new GatewayProcess({
    config,
    agent: null,
    args: ['--http', '127.0.0.1:0', '--workers', String(count), '--redis', redis.url, '--rules', rules, '--pins', 'off'],
  });
  // The primary says so once every worker listens.
  const line = await Promise.race([
    gw.waitForLog((l) => l.workers === count && typeof l.url === 'string'),
    gw.exited.then((exit) => {
      throw new Error(`the primary exited (${JSON.stringify(exit)}): ${JSON.stringify(gw.logs.slice(-5))}`);
    }),
  ]);
  const url = line.url as string;
  const base = url.replace(/\/mcp$/, '');
  assert.ok(await until(async () => (await workersOf(base)).length === count, 30_000), `${count} workers in the cluster`);
  return { gw, url, base };
}

/**
 * A `fetch` for the SDK's transport over node:http with `agent` (keep-alive), so a test can count
 * the connections an agent's requests travel on (`agent`'s sockets) — undici's pool does not say.
 */
export function agentFetch(agent: Agent): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return (url, init) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
      const req = httpRequest(new URL(url), { method: init?.method ?? 'GET', headers, agent, signal: init?.signal ?? undefined }, (res) => {
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
        const status = res.statusCode ?? 502;
        const empty = status === 202 || status === 204 || status === 304 || init?.method === 'HEAD';
        if (empty) res.resume();
        resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream), { status, headers: out }));
      });
      req.once('error', reject);
      req.end(typeof init?.body === 'string' ? init.body : undefined);
    });
}

/** SIGTERM to the primary (if it still runs) and its exit awaited. */
export async function stopWorkers(host: WorkersHost | undefined): Promise<void> {
  const gw = host?.gw;
  if (gw !== undefined && gw.child.exitCode === null && gw.child.signalCode === null) {
    gw.child.kill('SIGTERM');
    await gw.exited;
  }
}
