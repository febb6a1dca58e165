// Interceptor servers at the gate: the servers of `.mcp.json`'s `interceptors` section, each listed
// with `interceptors/list` when its connection is ready, and the chains they make for one message of
// a call — which interceptors the rules' `interceptors` bindings (rules/interceptors-config.ts) give
// this agent, server, tool and event, with the rules' policy over each one's declaration — run by
// interceptor-chain.ts with `interceptor/invoke`. Every run is audited (each interceptor's verdict,
// never the payload) and a blocked one becomes MCPG_INTERCEPTOR_DENIED or MCPG_INTERCEPTOR_FAILED.
//
// Cost: with no interceptor server configured the session asks nothing (`Interceptors.none`, one
// property read); otherwise a message no interceptor hooks costs the bindings' glob tests, no await.

import { GatewayError } from '../errors.js';
import type { AuditLog } from '../observability/audit.js';
import type { Logger } from '../observability/logger.js';
import { DEFAULT_INTERCEPTOR_TIMEOUT_MS, type InterceptorBinding } from '../rules/interceptors-config.js';
import type { RulesInForce } from '../rules/load.js';
import { runChain, type ChainEntry, type ChainOutcome, type InterceptorPhase, type Verdict } from './interceptor-chain.js';

/** What the gate needs of an interceptor server's connection (servers/connection.ts `Connection`). */
interface InterceptorHost {
  readonly name: string;
  request(method: string, params?: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/** One interceptor as its server declares it (`interceptors/list`), the fields the chain reads. */
interface Declared {
  readonly name: string;
  readonly type: 'validation' | 'mutation';
  readonly hooks: readonly { readonly events: readonly string[]; readonly phase: InterceptorPhase }[];
  readonly mode: 'active' | 'audit' | undefined;
  readonly failOpen: boolean | undefined;
  readonly priorityHint: number | { readonly request?: number; readonly response?: number } | undefined;
}

/** The message a chain judges: whose, on which server, and which lifecycle event. */
export interface InterceptSubject {
  readonly agent: string;
  readonly session: string;
  readonly server: string;
  /** The server's own tool name (undefined: a resource read or a prompt). */
  readonly tool: string | undefined;
  /** What the agent asked for: a tool's or prompt's public name, a resource's URI. */
  readonly name: string;
  /** The lifecycle event: the request's method. */
  readonly event: string;
}

interface Hosted {
  readonly host: InterceptorHost;
  declared: readonly Declared[] | undefined;
  /** Settles when the server is first listed (or found unreachable). */
  listed: Promise<void>;
  settle: () => void;
}

/** Every binding, for a rules file without an `interceptors` section. */
const EVERYTHING = (use: string): InterceptorBinding =>
  Object.freeze({ use, applies: () => true, names: undefined, events: undefined, policy: Object.freeze({}) });

/** At most this many interceptors are declared by one server (what a list beyond it adds is dropped). */
const MAX_DECLARED = 256;

interface InterceptorsOptions {
  inForce: RulesInForce;
  audit: AuditLog | undefined;
  log: Logger;
}

export class Interceptors {
  private readonly hosts = new Map<string, Hosted>();
  private everything: readonly InterceptorBinding[] = [];

  constructor(private readonly o: InterceptorsOptions) {}

  /** True when no interceptor server is configured: the session asks nothing more (a field, read on every call). */
  none = true;

  /** An interceptor server, known from now on (listed once its connection is ready: `ready`). */
  add(host: InterceptorHost): void {
    let settle = (): void => undefined;
    const listed = new Promise<void>((resolve) => (settle = resolve));
    this.hosts.set(host.name, { host, declared: undefined, listed, settle });
    this.none = false;
    this.everything = Object.freeze([...this.hosts.keys()].map(EVERYTHING));
  }

  /** The server's connection is ready: its interceptors are listed (a failure leaves it unlisted, so fail-closed). */
  async ready(name: string): Promise<void> {
    const hosted = this.hosts.get(name);
    if (hosted === undefined) return;
    try {
      const result = await hosted.host.request('interceptors/list', {});
      hosted.declared = declaredIn(result.interceptors);
      this.o.log.info('interceptors listed', { server: name, interceptors: hosted.declared.map((d) => d.name) });
    } catch (err) {
      hosted.declared = undefined;
      this.o.log.warn('an interceptor server could not be listed', {
        server: name,
        error: err instanceof Error ? err.message : String(err),
      });
    }
    hosted.settle();
  }

  /** The server's connection is gone for now: its interceptors are unknown (fail-closed ones block) until it is ready again. */
  lost(name: string): void {
    const hosted = this.hosts.get(name);
    if (hosted !== undefined) hosted.declared = undefined;
  }

  /** The server could not be started at all: calls waiting for its first list stop waiting. */
  unreachable(name: string): void {
    this.hosts.get(name)?.settle();
  }

  /** The interceptors some interceptor server declares, by server (status and the console). */
  declared(): Record<string, readonly string[] | null> {
    return Object.fromEntries([...this.hosts].map(([name, h]) => [name, h.declared?.map((d) => d.name) ?? null]));
  }

  /**
   * One message through the chain of interceptors bound to it: undefined when none hooks it (no
   * await), else the payload that goes on (the same object when no active mutator changed it) or the
   * refusal.
   */
  intercept(subject: InterceptSubject, phase: InterceptorPhase, payload: unknown): Promise<unknown> | undefined {
    const bound = this.bound(subject);
    if (bound.length === 0) return undefined;
    return this.run(subject, phase, payload, bound);
  }

  /** The bindings of this subject whose server is configured, in rules order. */
  private bound(subject: InterceptSubject): readonly InterceptorBinding[] {
    const bindings = this.o.inForce.rules.interceptors ?? this.everything;
    let found: InterceptorBinding[] | undefined;
    for (const binding of bindings) {
      if (!this.hosts.has(binding.use) || !binding.applies(subject.agent, subject.server, subject.tool)) continue;
      if (binding.events !== undefined && !binding.events.has(subject.event) && !binding.events.has('*')) continue;
      (found ??= []).push(binding);
    }
    return found ?? [];
  }

  private async run(
    subject: InterceptSubject,
    phase: InterceptorPhase,
    payload: unknown,
    bound: readonly InterceptorBinding[],
  ): Promise<unknown> {
    const entries: ChainEntry[] = [];
    const unavailable: Verdict[] = [];
    const seen = new Set<string>();
    for (const binding of bound) {
      const hosted = this.hosts.get(binding.use)!;
      const timeoutMs = binding.policy.timeoutMs ?? DEFAULT_INTERCEPTOR_TIMEOUT_MS;
      if (hosted.declared === undefined) await waitAtMost(hosted.listed, timeoutMs);
      const declared = hosted.declared;
      if (declared === undefined) {
        // Unknown interceptors cannot be judged to pass: fail-closed unless the binding is fail-open.
        if (binding.policy.failOpen === true) continue;
        unavailable.push({
          interceptor: '*',
          host: binding.use,
          type: 'unknown',
          mode: 'active',
          outcome: 'failed',
          reason: 'its server is not running',
          ms: 0,
        });
        continue;
      }
      for (const d of declared) {
        const key = `${binding.use}\u0000${d.name}`;
        if (seen.has(key) || !hooks(d, subject.event, phase)) continue;
        if (binding.names !== undefined && !binding.names.exact.has(d.name) && binding.names.match(d.name) === undefined) continue;
        seen.add(key);
        entries.push({
          name: d.name,
          host: binding.use,
          type: d.type,
          mode: binding.policy.mode ?? d.mode ?? 'active',
          failOpen: binding.policy.failOpen ?? d.failOpen ?? false,
          priority: binding.policy.priorityHint ?? priorityOf(d, phase),
          timeoutMs,
          invoke: (params, ms) => hosted.host.request('interceptor/invoke', params, ms),
        });
      }
    }
    if (unavailable.length > 0) {
      const outcome: ChainOutcome = { decision: 'deny', payload, mutated: false, verdicts: unavailable, blockedBy: unavailable[0]! };
      this.decided(subject, phase, outcome);
      return refusal(subject, phase, outcome.blockedBy!);
    }
    if (entries.length === 0) return payload;
    const outcome = await runChain(entries, {
      event: subject.event,
      phase,
      payload,
      context: { sessionId: subject.session, principal: { type: 'user', id: subject.agent }, timestamp: new Date().toISOString() },
      meta: { 'io.mcpgate/server': subject.server, ...(subject.tool !== undefined && { 'io.mcpgate/tool': subject.tool }) },
    });
    this.decided(subject, phase, outcome);
    return outcome.blockedBy !== undefined ? refusal(subject, phase, outcome.blockedBy) : outcome.payload;
  }

  private decided(subject: InterceptSubject, phase: InterceptorPhase, outcome: ChainOutcome): void {
    this.o.audit?.record({
      event: 'interceptor',
      agent: subject.agent,
      session: subject.session,
      method: subject.event,
      server: subject.server,
      name: subject.name,
      phase,
      decision: outcome.decision,
      mutated: outcome.mutated,
      verdicts: outcome.verdicts.map((v) => ({
        interceptor: v.interceptor,
        host: v.host,
        type: v.type,
        mode: v.mode,
        outcome: v.outcome,
        ...(v.severity !== undefined && { severity: v.severity }),
        ...(v.reason !== undefined && { reason: v.reason }),
        ms: v.ms,
      })),
    });
    const fields = {
      agent: subject.agent,
      server: subject.server,
      name: subject.name,
      phase,
      verdicts: outcome.verdicts.map((v) => `${v.host}/${v.interceptor}: ${v.outcome}${v.mode === 'audit' ? ' (audit)' : ''}`),
    };
    if (outcome.decision === 'deny') this.o.log.warn('interceptors blocked a message', fields);
    else if (outcome.verdicts.some((v) => v.outcome === 'failed' || v.outcome === 'invalid'))
      this.o.log.info('interceptors: found in a message', fields);
  }
}

/** An interceptor hooks `event` on `phase`: a hook of that phase names it, `*`, or its namespace (`tools/*`). */
function hooks(d: Declared, event: string, phase: InterceptorPhase): boolean {
  return d.hooks.some(
    (h) => h.phase === phase && h.events.some((e) => e === event || e === '*' || (e.endsWith('/*') && event.startsWith(e.slice(0, -1)))),
  );
}

function priorityOf(d: Declared, phase: InterceptorPhase): number {
  const hint = d.priorityHint;
  if (hint === undefined) return 0;
  return typeof hint === 'number' ? hint : (hint[phase] ?? 0);
}

/** What a server's `interceptors/list` declares, read as untrusted input: what is not an interceptor is left out. */
function declaredIn(list: unknown): Declared[] {
  if (!Array.isArray(list)) return [];
  const out: Declared[] = [];
  for (const item of list.slice(0, MAX_DECLARED)) {
    if (typeof item !== 'object' || item === null) continue;
    const d = item as Record<string, unknown>;
    if (typeof d.name !== 'string' || (d.type !== 'validation' && d.type !== 'mutation') || !Array.isArray(d.hooks)) continue;
    const hooksOf = d.hooks.filter(
      (h): h is { events: string[]; phase: InterceptorPhase } =>
        typeof h === 'object' &&
        h !== null &&
        ((h as Record<string, unknown>).phase === 'request' || (h as Record<string, unknown>).phase === 'response') &&
        Array.isArray((h as Record<string, unknown>).events) &&
        ((h as Record<string, unknown>).events as unknown[]).every((e) => typeof e === 'string'),
    );
    const hint = d.priorityHint;
    out.push(
      Object.freeze({
        name: d.name,
        type: d.type,
        hooks: hooksOf,
        mode: d.mode === 'audit' ? 'audit' : d.mode === 'active' ? 'active' : undefined,
        failOpen: typeof d.failOpen === 'boolean' ? d.failOpen : undefined,
        priorityHint:
          typeof hint === 'number'
            ? hint
            : typeof hint === 'object' && hint !== null
              ? {
                  ...(typeof (hint as Record<string, unknown>).request === 'number' && { request: (hint as { request: number }).request }),
                  ...(typeof (hint as Record<string, unknown>).response === 'number' && {
                    response: (hint as { response: number }).response,
                  }),
                }
              : undefined,
      }),
    );
  }
  return out;
}

function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

function refusal(subject: InterceptSubject, phase: InterceptorPhase, verdict: Verdict): GatewayError {
  const where =
    phase === 'request'
      ? `the call to server "${subject.server}" was not sent`
      : `the answer of server "${subject.server}" was not passed on`;
  const detail = { interceptor: verdict.interceptor, server: verdict.host, phase, event: subject.event };
  if (verdict.outcome === 'invalid') {
    const said = (verdict.messages ?? [])
      .map((m) =>
        typeof m === 'object' && m !== null && typeof (m as { message?: unknown }).message === 'string'
          ? (m as { message: string }).message
          : '',
      )
      .filter((m) => m !== '')
      .join('; ');
    return new GatewayError(
      'MCPG_INTERCEPTOR_DENIED',
      `interceptor "${verdict.interceptor}" (${verdict.host}) judged "${subject.name}" invalid${said === '' ? '' : `: ${said.slice(0, 300)}`}; ${where}`,
      { detail: { ...detail, ...(verdict.messages !== undefined && { messages: verdict.messages }) } },
    );
  }
  return new GatewayError(
    'MCPG_INTERCEPTOR_FAILED',
    `interceptor "${verdict.interceptor}" (${verdict.host}) failed (${verdict.reason ?? 'no verdict'}) and is not fail-open; ${where}`,
    { detail: { ...detail, reason: verdict.reason ?? 'no verdict' } },
  );
}
