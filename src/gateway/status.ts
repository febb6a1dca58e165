// The gateway's status for an operator (get_gateway_status, the HTTP status route and
// `mcpgate status`): reload status of each configuration file, the rules in force, every server's
// state, breaker and retries, the agent sessions, the config paths. Secrets (tokens, auth keys) are never included.

import type { Catalog } from '../catalog/catalog.js';
import type { SizeCaps } from '../catalog/size-caps.js';
import type { SkillShelf } from '../catalog/skill-shelf.js';
import type { ServersConfig } from '../config/types.js';
import type { Rules } from '../rules/load.js';
import type { Connection } from '../servers/connection.js';
import { stderrTailOf } from '../servers/transports/stdio/process.js';
import { sandboxStatus } from '../servers/transports/stdio/sandbox-status.js';
import type { ConnectionPool } from '../servers/pool.js';
import type { ToolSearch } from './modes/tool-search.js';
import type { CodeBoard } from './modes/code-board.js';

/** What the status reads (the Gateway has each of these). */
interface StatusParts {
  readonly rules: Rules;
  readonly config: ServersConfig;
  readonly catalog: Catalog;
  /** Every origin's skills and which the pins hold (the Skills extension). */
  readonly skills: Pick<SkillShelf, 'entriesOf' | 'heldOf' | 'listedServers'>;
  readonly limits: Pick<SizeCaps, 'report'>;
  readonly connections: ReadonlyMap<string, Connection>;
  readonly agents: Iterable<{ readonly agent: string; readonly transport: string }> & { readonly size: number };
  readonly pins: { readonly dir: string; readonly mode: string };
  readonly mode: string;
  readonly pool: Pick<ConnectionPool, 'stats' | 'list'>;
  /** Calls waiting here for a person's approval (approval-desk.ts). */
  readonly approvals: { readonly waiting: number };
  readonly search: Pick<ToolSearch, 'counts' | 'indexed' | 'hybridStatus' | 'inUse'>;
  /** Code mode's runs (shown once a run has started, or while the gateway's mode is code). */
  readonly codeBoard: Pick<CodeBoard, 'used' | 'status'>;
  statusSource(): Record<string, unknown>;
}

export function gatewayStatus(gateway: StatusParts): Record<string, unknown> {
  const rules = gateway.rules;
  return {
    ...gateway.statusSource(),
    policy: rules.open
      ? { file: null, open: true, note: 'no rules file: every agent may use every server' }
      : {
          file: rules.file,
          agent_count: rules.agents.size,
          agent_ids: [...rules.agents.keys()].sort(),
          ...(rules.grants.length > 0 && {
            grants: rules.grants.map((g) => ({ name: g.id, when: Object.fromEntries(g.when.map((t) => [t.claim, [...t.values]])) })),
          }),
          defaults: { deny_on_missing_agent: rules.defaults.denyOnMissingAgent },
        },
    servers: gateway.config.servers.map((s) => {
      const conn = gateway.connections.get(s.name);
      return {
        name: s.name,
        state: s.disabled ? 'disabled' : (conn?.shownState ?? 'not started'),
        ...(s.start === 'on-demand' && {
          start: 'on-demand',
          on_demand: {
            idle_stop_ms: s.idleStop ?? null,
            starts: conn?.demandStarts ?? 0,
            stops: conn?.demandStops ?? 0,
            pid: conn?.pid ?? null,
          },
        }),
        tools: gateway.catalog.counts(s.name).tools,
        held: gateway.catalog.heldCount(s.name),
        // Only for a server that serves skills.
        ...skillsField(gateway, s.name),
        limited: gateway.limits.report(s.name),
        attempts: conn?.attempts ?? 0,
        breaker: conn?.breaker.state,
        last_error: conn?.lastError?.message ?? null,
        // What the server printed last (cut, bounded): for operators only, never sent with agents' errors.
        last_stderr: stderrTailOf(conn?.lastError) ?? null,
        // Only for a sandboxed server: its rules, and the one that likely stopped it.
        ...(s.type === 'stdio' && s.sandbox !== undefined && { sandbox: sandboxStatus(s.sandbox, conn?.lastError) }),
        next_attempt_at: conn?.nextAttemptAt !== undefined ? new Date(conn.nextAttemptAt).toISOString() : null,
      };
    }),
    // Only when some server has per-agent or per-session connections.
    ...poolsField(gateway),
    sessions: sessionSummary(gateway),
    // Only while some call waits here for a person's approval (`mcpgate approve-call` lists them all).
    ...(gateway.approvals.waiting > 0 && { approvals_waiting: gateway.approvals.waiting }),
    config_paths: { mcp_json: gateway.config.file, rules: rules.file ?? null, state: gateway.pins.dir },
    mode: gateway.mode,
    pins: gateway.pins.mode,
    // Only when mcpgate serves skill folders of its own (`serve --skills`), the origin `mcpgate`.
    ...(gateway.skills.listedServers().includes('mcpgate') &&
      !gateway.config.servers.some((s) => s.name === 'mcpgate') && { local_skills: skillsField(gateway, 'mcpgate').skills }),
    // Only where search mode is used: a gateway without it keeps its status as it was.
    ...(gateway.search.inUse && { search: searchSummary(gateway) }),
    ...((gateway.codeBoard.used || gateway.mode === 'code') && { code: gateway.codeBoard.status() }),
  };
}

/** Most held skills named in a server's status (the rest are counted). */
const HELD_SKILLS_SHOWN = 100;

/** A server's skills: how many, and each held one by its URI on the server (with `mcpgate pins` for what changed). */
function skillsField(gateway: StatusParts, server: string): { skills?: Record<string, unknown> } {
  const entries = gateway.skills.entriesOf(server);
  if (entries.length === 0) return {};
  const held = [...gateway.skills.heldOf(server)].sort();
  return { skills: { listed: entries.length - held.length, held: held.length, held_skills: held.slice(0, HELD_SKILLS_SHOWN) } };
}

/** Search mode's counts since start (every agent in search mode, by the gateway's mode or its rules'). */
function searchSummary(gateway: StatusParts): Record<string, unknown> {
  const { searches, results, zeroResults } = gateway.search.counts;
  const hybrid = gateway.search.hybridStatus();
  return {
    searches,
    results,
    zero_results: zeroResults,
    indexed_tools: gateway.search.indexed,
    ranking: hybrid === undefined ? 'lexical' : 'hybrid',
    ...(hybrid !== undefined && {
      embeddings: {
        endpoint: hybrid.endpoint,
        model: hybrid.model,
        vectors: hybrid.vectors,
        hybrid_searches: hybrid.hybridSearches,
        fallbacks: hybrid.fallbacks,
        last_error: hybrid.lastError ?? null,
      },
    }),
  };
}

function poolsField(gateway: StatusParts): { pools?: Record<string, unknown>[] } {
  const pools = poolSummary(gateway);
  return pools.length === 0 ? {} : { pools };
}

/**
 * Each per-agent or per-session server's pool: its settings, counters, and connections by scope
 * (`agent:ID`, or `session:N` — for a per-agent server that means an agent with no identity of its
 * own, which gets one connection per session rather than sharing one).
 */
function poolSummary(gateway: StatusParts): Record<string, unknown>[] {
  const pooled = gateway.config.servers.filter((s) => s.sessions !== 'shared');
  const entries = gateway.pool.list();
  return gateway.pool.stats(pooled.map((s) => s.name)).map((stats) => {
    const config = pooled.find((s) => s.name === stats.server)!;
    const mine = entries.filter((e) => e.server === stats.server);
    const unnamed = config.sessions === 'per-agent' ? mine.filter((e) => e.scope.kind === 'session').length : 0;
    return {
      ...stats,
      hit_rate: stats.hits + stats.misses === 0 ? null : stats.hits / (stats.hits + stats.misses),
      sessions: config.sessions,
      settings: config.pool ?? null,
      // Bounded: a pool of hundreds of agents is summarised by its counts above.
      // own_headers: whether the agent's serverHeaders are in use (never their names or values).
      scopes: mine.slice(0, 100).map((e) => ({
        scope: e.scope.key,
        agent: e.agent,
        state: e.started ? e.conn.state : 'starting',
        pid: e.conn.pid ?? null,
        own_headers: e.credential !== '',
      })),
      ...(unnamed > 0 && {
        note: `${unnamed} connection(s) are for agents with no identity of their own (no --agent or X-Mcpgate-Agent): one per agent session, never shared`,
      }),
    };
  });
}

/** Agent sessions open now, in total, by agent and by transport. */
function sessionSummary(gateway: StatusParts): { total: number; by_agent: Record<string, number>; by_transport: Record<string, number> } {
  // Keyed by agent ids (agent-chosen with --no-auth or a JWT claim): no prototype, so `__proto__`
  // and `constructor` are ids like any other.
  const byAgent = Object.create(null) as Record<string, number>;
  const byTransport = Object.create(null) as Record<string, number>;
  for (const session of gateway.agents) {
    byAgent[session.agent] = (byAgent[session.agent] ?? 0) + 1;
    byTransport[session.transport] = (byTransport[session.transport] ?? 0) + 1;
  }
  return { total: gateway.agents.size, by_agent: byAgent, by_transport: byTransport };
}
