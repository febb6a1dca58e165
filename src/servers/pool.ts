// The pool: connections to per-agent and per-session servers, one per (server, scope) key, where the
// scope is an agent identity (`agent:ID`) or an agent session (`session:N`), a `PoolScope` made only
// by `scopeOf`. A connection is made lazily by the same factory as a shared one, handed out again
// while it lives (a hit: a map lookup and a clock read), and closed when it is idle or old, when its
// owner or its server goes, or when it dies. Per server at most `max` connections (past it, with none
// idle, MCPG_POOL_EXHAUSTED), a creation breaker, and an opt-in health check before reuse. An agent's
// own headers for a remote server are part of the key, as a digest (`credentialDigest`). The rules of
// each: src/servers/README.md, "The pool".

import { createHash } from 'node:crypto';
import { type ServerConfig, type SharingMode, DEFAULT_POOL } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { PoolCounters } from '../observability/metrics.js';
import { CircuitBreaker, DEFAULT_BREAKER, type BreakerOptions } from './breaker.js';
import type { Connection } from './connection.js';
import { systemClock, type Clock, type TimerHandle } from './clock.js';

/**
 * Whose a pooled connection is: one agent identity (a per-agent server) or one agent session (a
 * per-session server, and a per-agent one for an agent with no identity of its own). `key` is its
 * one text form (`agent:ID`, `session:N`): the pool's and the own catalogs' map key, and what the
 * status and logs show. Made only by `scopeOf`.
 */
export type PoolScope =
  | { readonly kind: 'agent'; readonly agent: string; readonly key: string }
  | { readonly kind: 'session'; readonly serial: number; readonly key: string };

/** Who an agent session is, for its pool scopes. */
export interface ScopeOwner {
  readonly agent: string;
  readonly identified: boolean;
  readonly serial: number;
}

/** Whether `owner` is one of the sessions a connection of `scope` belongs to. */
export function isOwner(owner: ScopeOwner, scope: PoolScope): boolean {
  return scope.kind === 'agent' ? owner.identified && owner.agent === scope.agent : owner.serial === scope.serial;
}

/**
 * The pool scope of a session for a server of `mode`: its agent's identity for per-agent, itself for
 * per-session. An agent with no identity of its own (stdio without --agent) gets its session's scope
 * even on a per-agent server: never one shared by accident.
 */
export function scopeOf(owner: ScopeOwner, mode: SharingMode): PoolScope {
  return mode === 'per-agent' && owner.identified
    ? { kind: 'agent', agent: owner.agent, key: `agent:${owner.agent}` }
    : { kind: 'session', serial: owner.serial, key: `session:${owner.serial}` };
}

interface PoolParts {
  /** Makes the connection for one key (not started). */
  create(config: ServerConfig, scope: PoolScope, owner: PoolOwner): Connection;
  /** Whether an agent call is in flight on the connection (then it is never evicted). */
  busy(conn: Connection): boolean;
  log: Logger;
  clock?: Clock;
  /** The creation breaker (default: the connection breaker's defaults). */
  breaker?: Partial<BreakerOptions>;
}

/** One pooled connection and what its lifetime is decided by. */
export interface PoolEntry {
  readonly server: string;
  readonly scope: PoolScope;
  /** The agent identity the connection is for (both scopes). */
  readonly agent: string;
  /** Whether that identity is verified (only then may it have headers of its own). */
  readonly identified: boolean;
  /** Digest of the agent's own headers the connection was made with ('' for none). */
  readonly credential: string;
  readonly conn: Connection;
  readonly createdAt: number;
  lastUsed: number;
  /** Set once start() made the connection ready; until then callers wait on `ready`. */
  started: boolean;
  ready: Promise<Connection>;
  /** A health check before reuse in progress (pool.healthCheck): callers meanwhile wait on it. */
  checking: Promise<Connection> | undefined;
  timer: TimerHandle | undefined;
}

/** Counters and gauges of one server's pool (status and /metrics). */
interface PoolStats extends PoolCounters {
  /** Pids of the pool's live stdio children. */
  pids: number[];
}

interface Counters {
  hits: number;
  misses: number;
  evictions: number;
  reaped: number;
  creationFailures: number;
  breaker: CircuitBreaker;
}

const BUSY_RECHECK_MS = 5_000;

/** The lists a server may support, cheapest first: the fallback of a health check where ping is unsupported. */
const CHEAP_LISTS: readonly [capability: string, method: string][] = [
  ['tools', 'tools/list'],
  ['prompts', 'prompts/list'],
  ['resources', 'resources/list'],
];

/**
 * Whether a connection still answers within `timeoutMs`: a ping, or — when the server
 * says it has no ping (-32601) — the first page of a list it supports. A timeout, a lost session
 * or any other failure is no.
 */
async function answers(conn: Connection, timeoutMs: number): Promise<boolean> {
  try {
    await conn.request('ping', {}, timeoutMs);
    return true;
  } catch (err) {
    const code = err instanceof GatewayError ? (err.detail?.serverError as { code?: unknown } | undefined)?.code : undefined;
    if (code !== -32601) return false;
  }
  const capabilities = conn.info?.capabilities ?? {};
  const list = CHEAP_LISTS.find(([capability]) => capabilities[capability] !== undefined);
  // No ping and nothing to list: its "method not found" was an answer in time.
  if (list === undefined) return true;
  try {
    await conn.request(list[1], {}, timeoutMs);
    return true;
  } catch {
    return false;
  }
}

/** Who a pooled connection is for. */
export interface PoolOwner {
  readonly agent: string;
  readonly identified: boolean;
  /** The extensions the owner declared, for the connection made for it to declare to the server. */
  readonly extensions?: Readonly<Record<string, unknown>>;
  /**
   * What the owner declared (sampling, elicitation and its modes, roots): the connection made for it
   * declares what this agent can answer, so the server offers it what it would offer it directly.
   */
  readonly agentCapabilities?: Readonly<Record<string, unknown>>;
}

/** An agent's own headers for one remote server (rules' `serverHeaders`, already expanded). */
type AgentHeaders = Readonly<Record<string, string>>;

function keyOf(server: string, scope: PoolScope, credential: string): string {
  return `${server}\u0000${scope.key}\u0000${credential}`;
}

/** A digest of an agent's headers, order-insensitive: names compared case-insensitively. */
export function credentialDigest(headers: AgentHeaders): string {
  const canonical = Object.entries(headers)
    .map(([name, value]) => [name.toLowerCase(), value])
    .sort(([a], [b]) => (a! < b! ? -1 : 1));
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url');
}

/** The server entry with the agent's headers in place of same-named ones (case-insensitive); stdio: as is. */
function withHeaders(config: ServerConfig, headers: AgentHeaders): ServerConfig {
  if (config.type === 'stdio') return config;
  const own = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers)) if (!own.has(name.toLowerCase())) merged[name] = value;
  return Object.freeze({ ...config, headers: Object.freeze(Object.assign(merged, headers)) });
}

export class ConnectionPool {
  private readonly entries = new Map<string, PoolEntry>();
  private readonly byConn = new Map<Connection, PoolEntry>();
  private readonly counters = new Map<string, Counters>();
  private readonly closing = new Set<Promise<void>>();
  private readonly clock: Clock;
  private closed = false;

  constructor(private readonly parts: PoolParts) {
    this.clock = parts.clock ?? systemClock;
  }

  /**
   * The connection for (server, scope): a live one at once (a hit), else a promise of a new one
   * started (a miss). Fails with MCPG_POOL_EXHAUSTED (cap reached, none idle), MCPG_SERVER_UNAVAILABLE
   * (the creation breaker is open, or the server would not start) or MCPG_SHUTTING_DOWN.
   */
  get(config: ServerConfig, scope: PoolScope, owner: PoolOwner, headers?: AgentHeaders): Connection | Promise<Connection> {
    const credential = headers === undefined ? '' : credentialDigest(headers);
    const key = keyOf(config.name, scope, credential);
    const entry = this.entries.get(key);
    const counters = this.countersOf(config.name);
    const settings = config.pool ?? DEFAULT_POOL;
    if (entry !== undefined) {
      counters.hits += 1;
      const now = this.clock.now();
      const check = settings.healthCheck;
      if (
        check !== undefined &&
        entry.started &&
        entry.checking === undefined &&
        now - entry.lastUsed >= check.idleMs &&
        !this.parts.busy(entry.conn)
      ) {
        entry.checking = this.checkBeforeReuse(entry, check.timeoutMs, () => this.get(config, scope, owner, headers));
      }
      entry.lastUsed = now;
      if (entry.checking !== undefined) return entry.checking;
      return entry.started ? entry.conn : entry.ready;
    }
    counters.misses += 1;
    if (this.closed) throw new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down');
    this.makeRoom(config.name, settings.max);
    const admission = counters.breaker.admit();
    if (!admission.ok) {
      const seconds = Math.max(0, Math.ceil((admission.retryAt - this.clock.now()) / 1000));
      throw new GatewayError(
        'MCPG_SERVER_UNAVAILABLE',
        `server "${config.name}": ${counters.breaker.failures} connections in a row failed to start; the next attempt is in ${seconds} s`,
        { server: config.name, detail: { breaker: counters.breaker.state, retryAt: new Date(admission.retryAt).toISOString() } },
      );
    }
    const conn = this.parts.create(headers === undefined ? config : withHeaders(config, headers), scope, owner);
    const now = this.clock.now();
    // The start's outcome is read once it settles, when `made` (below) exists.
    const ready = conn.start().then((ok) => {
      if (this.entries.get(key) !== made)
        throw new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${config.name}": the connection was closed while it started`, {
          server: config.name,
        });
      if (!ok) {
        counters.creationFailures += 1;
        // An agent who has not logged in (its own account) says nothing about the server: others' connections still start.
        if (conn.lastError?.code !== 'MCPG_SERVER_NEEDS_LOGIN') counters.breaker.failure();
        void this.remove(made);
        throw (
          conn.lastError ?? new GatewayError('MCPG_SERVER_START_FAILED', `server "${config.name}" failed to start`, { server: config.name })
        );
      }
      counters.breaker.success();
      made.started = true;
      this.schedule(made, settings.idleMs, settings.ttlMs);
      this.parts.log.debug('pooled connection ready', { server: config.name, scope: scope.key, pid: conn.pid });
      return conn;
    });
    const made: PoolEntry = {
      server: config.name,
      scope,
      agent: owner.agent,
      identified: owner.identified,
      credential,
      conn,
      createdAt: now,
      lastUsed: now,
      started: false,
      ready,
      checking: undefined,
      timer: undefined,
    };
    // A caller that gave up still leaves the rejection handled.
    made.ready.catch(() => undefined);
    this.entries.set(key, made);
    this.byConn.set(conn, made);
    return made.ready;
  }

  /** The entry a pooled connection belongs to (undefined for a shared connection). */
  entryOf(conn: Connection): PoolEntry | undefined {
    return this.byConn.get(conn);
  }

  /** The live entries (status, rules checks). */
  list(): PoolEntry[] {
    return [...this.entries.values()];
  }

  /** A pooled connection's session died: drop it, so the next call starts a fresh one. */
  reap(conn: Connection): void {
    const entry = this.byConn.get(conn);
    if (entry === undefined || !entry.started) return;
    this.countersOf(entry.server).reaped += 1;
    this.parts.log.info('a pooled connection was lost and is reaped', { server: entry.server, scope: entry.scope.key });
    void this.remove(entry);
  }

  /**
   * The health check before reuse of an idle connection: it answers (ping, else a cheap list) in
   * time → handed out; it does not → reaped (closed, its child stopped) and `again` gets the caller
   * a fresh one, so the agent's call goes on transparently.
   */
  private async checkBeforeReuse(entry: PoolEntry, timeoutMs: number, again: () => Connection | Promise<Connection>): Promise<Connection> {
    const ok = await answers(entry.conn, timeoutMs);
    entry.checking = undefined;
    if (ok && this.byConn.get(entry.conn) === entry) return entry.conn;
    if (this.byConn.get(entry.conn) === entry) {
      this.countersOf(entry.server).reaped += 1;
      this.parts.log.info(
        `a pooled connection idle past its health check did not answer within ${timeoutMs} ms: reaped, a fresh one serves the call`,
        { server: entry.server, scope: entry.scope.key },
      );
      void this.remove(entry);
    }
    return again();
  }

  /** An agent session ended (per-session) or an owner went: close every connection of that scope. */
  closeScope(scope: PoolScope): Promise<void> {
    return this.removeAll((entry) => entry.scope.key === scope.key);
  }

  /** A server was removed or changed: close all its pooled connections. */
  closeServer(server: string): Promise<void> {
    this.counters.delete(server);
    return this.removeAll((entry) => entry.server === server);
  }

  /** Closes every entry `keep` says no to (an agent that lost access to the server). */
  retain(keep: (entry: PoolEntry) => boolean): Promise<void> {
    return this.removeAll((entry) => !keep(entry));
  }

  /** Closes the entries `which` picks; resolves once their connections have closed. */
  private async removeAll(which: (entry: PoolEntry) => boolean): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const entry of [...this.entries.values()]) if (which(entry)) closing.push(this.remove(entry));
    await Promise.all(closing);
  }

  stats(servers: readonly string[]): PoolStats[] {
    return servers.map((server) => {
      const counters = this.countersOf(server);
      let keys = 0;
      let active = 0;
      const pids: number[] = [];
      for (const entry of this.entries.values()) {
        if (entry.server !== server) continue;
        keys += 1;
        if (this.parts.busy(entry.conn)) active += 1;
        if (entry.conn.pid !== undefined) pids.push(entry.conn.pid);
      }
      return {
        server,
        keys,
        active,
        idle: keys - active,
        hits: counters.hits,
        misses: counters.misses,
        evictions: counters.evictions,
        reaped: counters.reaped,
        creationFailures: counters.creationFailures,
        breaker: counters.breaker.state,
        breakerTrips: counters.breaker.trips,
        pids,
      };
    });
  }

  /** Closes everything (each child stopped by its stop sequence) and takes no more. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    for (const entry of [...this.entries.values()]) void this.remove(entry);
    while (this.closing.size > 0) await Promise.allSettled([...this.closing]);
  }

  destroy(): void {
    this.closed = true;
    for (const entry of [...this.entries.values()]) {
      entry.timer?.cancel();
      this.entries.delete(keyOf(entry.server, entry.scope, entry.credential));
      this.byConn.delete(entry.conn);
      entry.conn.destroy();
    }
  }

  /** Past the cap: close the least recently used idle connection of the server, or refuse. */
  private makeRoom(server: string, max: number): void {
    let count = 0;
    let lru: PoolEntry | undefined;
    for (const entry of this.entries.values()) {
      if (entry.server !== server) continue;
      count += 1;
      if (entry.started && !this.parts.busy(entry.conn) && (lru === undefined || entry.lastUsed < lru.lastUsed)) lru = entry;
    }
    if (count < max) return;
    if (lru === undefined) {
      throw new GatewayError(
        'MCPG_POOL_EXHAUSTED',
        `server "${server}" has ${count} pooled connections (its pool.max) and all are busy or starting; try again when a call finishes`,
        { server, detail: { max } },
      );
    }
    this.countersOf(server).evictions += 1;
    this.parts.log.info('pool full: closing the least recently used idle connection', { server, scope: lru.scope.key });
    void this.remove(lru);
  }

  /** One timer per entry, at the earlier of its idle and TTL deadlines; a use only moves `lastUsed`. */
  private schedule(entry: PoolEntry, idleMs: number, ttlMs: number): void {
    const due = Math.min(entry.lastUsed + idleMs, entry.createdAt + ttlMs);
    entry.timer = this.clock.after(Math.max(0, due - this.clock.now()), () => {
      entry.timer = undefined;
      if (this.byConn.get(entry.conn) !== entry) return;
      const now = this.clock.now();
      const expired = now >= entry.createdAt + ttlMs;
      const idle = now >= entry.lastUsed + idleMs;
      if (!expired && !idle) return this.schedule(entry, idleMs, ttlMs);
      if (this.parts.busy(entry.conn)) {
        // A call in flight keeps it; look again soon (a long call ends, then the deadline applies).
        entry.timer = this.clock.after(Math.min(idleMs, BUSY_RECHECK_MS), () => this.schedule(entry, idleMs, ttlMs));
        return;
      }
      this.countersOf(entry.server).evictions += 1;
      this.parts.log.info(expired ? 'pooled connection reached its TTL: closing it' : 'pooled connection idle: closing it', {
        server: entry.server,
        scope: entry.scope.key,
      });
      void this.remove(entry);
    });
  }

  private remove(entry: PoolEntry): Promise<void> {
    const key = keyOf(entry.server, entry.scope, entry.credential);
    if (this.entries.get(key) === entry) this.entries.delete(key);
    if (this.byConn.get(entry.conn) !== entry) return Promise.resolve();
    this.byConn.delete(entry.conn);
    entry.timer?.cancel();
    entry.timer = undefined;
    const closing = entry.conn
      .close()
      .catch((err: unknown) => this.parts.log.warn('a pooled connection failed to close', { server: entry.server, error: err }));
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
    return closing;
  }

  private countersOf(server: string): Counters {
    let counters = this.counters.get(server);
    if (counters === undefined) {
      counters = {
        hits: 0,
        misses: 0,
        evictions: 0,
        reaped: 0,
        creationFailures: 0,
        breaker: new CircuitBreaker({ ...DEFAULT_BREAKER, ...this.parts.breaker }, this.clock),
      };
      this.counters.set(server, counters);
    }
    return counters;
  }
}
