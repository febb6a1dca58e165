// Quotas and rate limits on tool calls: which of the rules' `limits` apply to a call
// (rules/limits-match.ts), their counters (quota-counters.ts: this worker's own, or the cluster's on
// Redis, given at construction), and the refusal an agent gets when one is over: MCP's rate-limited
// error (-31023, `MCPG_RATE_LIMITED`; the draft's -32023 when opted in), counted in `mcpgate_quota_refused_total` and written to the
// audit trail by the call gate's caller. `peek` checks without counting: a call that must first wait
// for a person's approval is refused before it waits if its limits would refuse it now.
//
// Cost: rules without `limits` cost a call one property read (`active`): nothing is looked up,
// allocated or sent to Redis. With Redis down (or failing a check) a check uses this worker's own
// counters — each worker then limits on its own, neither letting every call through nor refusing
// every one — and status says so until Redis answers again.

import { GatewayError } from '../errors.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { Logger } from '../observability/logger.js';
import type { Claims } from '../rules/decide.js';
import type { Rules } from '../rules/load.js';
import { limitsFor, namedLimits, type AppliedLimit } from '../rules/limits-match.js';
import { hasInFlight, hasWindow } from '../rules/limits.js';
import {
  LocalQuotaCounters,
  type CounterAnswer,
  type CounterAsk,
  type FlightAsk,
  type SharedQuotaCounters,
  type WindowAsk,
} from './quota-counters.js';

/** What a refused calls-in-flight limit tells the agent to wait: no one knows when a call in flight ends. */
const IN_FLIGHT_RETRY_MS = 1000;
/** Counters status shows (the most recently used first are kept). */
const MAX_SHOWN = 500;

/** Ends the call's hold on its calls-in-flight limits (idempotent). */
export type QuotaRelease = () => void;

/** A passed check: its release (a no-op when no in-flight limit applied). */
interface QuotaPass {
  readonly release: QuotaRelease;
}

/** What a rate-limited refusal adds to the audit record and tells the front (429 and Retry-After). */
export interface RateLimitDetail {
  readonly retryAfterMs: number;
  readonly limit?: number | undefined;
  readonly remaining?: number;
  readonly quota: {
    readonly rule: string;
    readonly level: AppliedLimit['level'];
    readonly kind: 'calls' | 'in_flight';
    readonly subject: string;
    readonly per?: string | undefined;
    readonly limit: number | undefined;
  };
}

/** A call over one of its limits: the error to answer (MCPG_RATE_LIMITED) and what it says. */
export interface QuotaRefusal {
  readonly error: GatewayError;
  readonly limited: RateLimitDetail;
}

/** The outcome of a check: passed, or the refusal to send. */
export type QuotaOutcome = QuotaPass | QuotaRefusal;

const NOTHING_HELD: QuotaPass = Object.freeze({ release: () => undefined });

/** One counter as status and the console show it. */
interface QuotaCounterStatus {
  /** The agent it counts, or `*` for a top-level limit (every agent together). */
  subject: string;
  rule: string;
  level: 'all' | 'server' | 'tool';
  kind: 'calls' | 'in_flight';
  limit: number;
  per?: string;
  used: number;
}

export interface QuotaStatus {
  /** `shared`: the cluster's counters on Redis; `local`: this worker's own (no --redis, or Redis down). */
  counters: 'shared' | 'local';
  /** Why the counters are local while this worker is in a cluster. */
  note?: string;
  /** Checks made on local counters because Redis could not be asked. */
  local_checks: number;
  limits: QuotaCounterStatus[];
}

/** One call's check, made once per (agent, server, tool) and rules snapshot. */
interface Plan {
  readonly ask: CounterAsk;
  readonly windowLimits: readonly AppliedLimit[];
  readonly flightLimits: readonly AppliedLimit[];
  readonly flightKeys: readonly string[];
}

/** A call no limit applies to (cached as such). */
const NO_PLAN = Object.freeze({}) as Plan;
/** Plans kept per rules snapshot before the cache starts over (agents × tools in use). */
const MAX_PLANS = 10_000;

interface Shown {
  subject: string;
  limit: AppliedLimit;
}

interface QuotasOptions {
  rules: () => Rules;
  metrics: GatewayMetrics;
  log: Logger;
  /** The cluster's counters (--redis, cluster/redis-quota-counters.ts); absent: this worker's own. */
  shared?: SharedQuotaCounters | undefined;
  now?: () => number;
}

export class Quotas {
  private readonly local: LocalQuotaCounters;
  private readonly shared: SharedQuotaCounters | undefined;
  private readonly rules: () => Rules;
  private readonly metrics: GatewayMetrics;
  private readonly log: Logger;
  private localChecks = 0;
  /** The last time a check fell back to local counters (ms since the epoch), for status. */
  private lastFallback: number | undefined;
  /** The counters used lately (key → what it counts), for status; bounded, the oldest forgotten. */
  private readonly shown = new Map<string, Shown>();
  /** The plans of the rules snapshot `plansOf` (a reload starts them over). */
  private readonly plans = new Map<string, Plan>();
  private plansOf: Rules | undefined;

  constructor(o: QuotasOptions) {
    this.rules = o.rules;
    this.metrics = o.metrics;
    this.log = o.log;
    this.shared = o.shared;
    this.local = new LocalQuotaCounters(o.now);
  }

  /**
   * Whether a call of `tool` on `server` by `agent` would pass its limits now, counting nothing:
   * undefined when it would (or no limit applies), else the refusal; a promise while the cluster's
   * counters are asked.
   */
  peek(
    agent: string,
    server: string,
    tool: string,
    claims: Claims | undefined,
  ): QuotaRefusal | Promise<QuotaRefusal | undefined> | undefined {
    const plan = this.planOf(agent, server, tool, claims);
    if (plan === undefined) return undefined;
    const decide = (answer: CounterAnswer): QuotaRefusal | undefined => (answer.ok ? undefined : this.refusal(plan, answer, server));
    const shared = this.shared;
    if (shared === undefined) return decide(this.local.peek(plan.ask));
    if (!shared.up) return decide(this.peekLocally(plan.ask, 'Redis is down'));
    return shared
      .peek(plan.ask)
      .then(decide, (err: unknown) => decide(this.peekLocally(plan.ask, err instanceof Error ? err.message : String(err))));
  }

  /**
   * Checks (and counts) a call of `tool` (the server's own name) on `server` by `agent`: undefined
   * when no limit applies, else the pass to hold while the call is in flight or the refusal; a
   * promise while the cluster's counters are asked.
   */
  take(agent: string, server: string, tool: string, claims: Claims | undefined): QuotaOutcome | Promise<QuotaOutcome> | undefined {
    const plan = this.planOf(agent, server, tool, claims);
    if (plan === undefined) return undefined;
    const decide = (answer: CounterAnswer, counters: { release(keys: readonly string[]): void }): QuotaOutcome => {
      if (!answer.ok) return this.refusal(plan, answer, server);
      if (plan.flightKeys.length === 0) return NOTHING_HELD;
      let held = true;
      return {
        release: () => {
          if (!held) return;
          held = false;
          counters.release(plan.flightKeys);
        },
      };
    };
    const shared = this.shared;
    if (shared === undefined) return decide(this.local.take(plan.ask), this.local);
    if (!shared.up) return decide(this.takeLocally(plan.ask, 'Redis is down'), this.local);
    return shared.take(plan.ask).then(
      (answer) => decide(answer, shared),
      (err: unknown) => decide(this.takeLocally(plan.ask, err instanceof Error ? err.message : String(err)), this.local),
    );
  }

  /**
   * What a call of (agent, server, tool) asks of the counters, made once per rules snapshot and kept
   * (bounded) unless grants with limits make it depend on the token's claims: a limited call then
   * costs a map lookup, not the matching and the keys' encoding.
   */
  private planOf(agent: string, server: string, tool: string, claims: Claims | undefined): Plan | undefined {
    const rules = this.rules();
    const cacheable = claims === undefined || rules.limits === undefined || rules.limits.grants.size === 0;
    if (cacheable) {
      if (this.plansOf !== rules) {
        this.plansOf = rules;
        this.plans.clear();
      }
      const key = `${agent}\u0000${server}\u0000${tool}`;
      const known = this.plans.get(key);
      if (known !== undefined) return known === NO_PLAN ? undefined : known;
      const made = this.makePlan(limitsFor(rules, agent, server, tool, claims));
      if (this.plans.size >= MAX_PLANS) this.plans.clear();
      this.plans.set(key, made ?? NO_PLAN);
      return made;
    }
    return this.makePlan(limitsFor(rules, agent, server, tool, claims));
  }

  private makePlan(applied: readonly AppliedLimit[]): Plan | undefined {
    if (applied.length === 0) return undefined;
    const windows: WindowAsk[] = [];
    const windowLimits: AppliedLimit[] = [];
    const inFlight: FlightAsk[] = [];
    const flightLimits: AppliedLimit[] = [];
    for (const limit of applied) {
      const spec = limit.spec;
      if (hasWindow(spec)) {
        const key = windowKey(limit.subject, spec.at, spec.windowMs);
        windows.push({ key, limit: spec.calls, windowMs: spec.windowMs });
        windowLimits.push(limit);
        this.show(key, limit);
      }
      if (hasInFlight(spec)) {
        const key = flightKey(limit.subject, spec.at);
        inFlight.push({ key, limit: spec.inFlight });
        flightLimits.push(limit);
        this.show(key, limit);
      }
    }
    return { ask: { windows, inFlight }, windowLimits, flightLimits, flightKeys: inFlight.map((f) => f.key) };
  }

  private takeLocally(ask: CounterAsk, why: string): CounterAnswer {
    this.fellBack(why);
    return this.local.take(ask);
  }

  private peekLocally(ask: CounterAsk, why: string): CounterAnswer {
    this.fellBack(why);
    return this.local.peek(ask);
  }

  /** A check went to this worker's counters while in a cluster: counted, and logged once a minute at most. */
  private fellBack(why: string): void {
    this.localChecks += 1;
    this.metrics.quotaLocalCheck();
    const now = Date.now();
    // Logged once per minute at most: every call would repeat it while Redis is down.
    if (this.lastFallback === undefined || now - this.lastFallback > 60_000)
      this.log.warn(
        `limits are counted on this worker alone: the cluster's Redis cannot be asked (${why}); each worker limits on its own until it can`,
      );
    this.lastFallback = now;
  }

  private refusal(plan: Plan, answer: Exclude<CounterAnswer, { ok: true }>, server: string): QuotaRefusal {
    const limit = answer.window ? plan.windowLimits[answer.index]! : plan.flightLimits[answer.index]!;
    return this.refuse(limit, answer.window, answer.retryAfterMs, server);
  }

  private refuse(limit: AppliedLimit, window: boolean, retryAfterMs: number, server: string): QuotaRefusal {
    const spec = limit.spec;
    const kind = window ? 'calls' : 'in_flight';
    this.metrics.quotaRefused(limit.level, kind);
    const wait = window ? retryAfterMs : IN_FLIGHT_RETRY_MS;
    const whose = limit.subject === '*' ? 'every agent together' : `agent ${JSON.stringify(limit.subject)}`;
    const counted = window && hasWindow(spec) ? spec : undefined;
    const what = counted !== undefined ? `${counted.calls} calls per ${counted.per}` : `${spec.inFlight} calls in flight`;
    const message = `rate limited: ${whose} reached the limit ${spec.at} (${what}); try again in ${Math.ceil(wait / 1000)} s`;
    const detail = {
      retryAfterMs: wait,
      ...(counted !== undefined && { limit: counted.calls, remaining: 0 }),
      quota: {
        rule: spec.at,
        level: limit.level,
        kind,
        subject: limit.subject,
        ...(counted !== undefined ? { per: counted.per, limit: counted.calls } : { limit: spec.inFlight }),
      },
    } satisfies RateLimitDetail;
    return { error: new GatewayError('MCPG_RATE_LIMITED', message, { server, detail }), limited: detail };
  }

  private show(key: string, limit: AppliedLimit): void {
    if (this.shown.has(key)) this.shown.delete(key);
    else if (this.shown.size >= MAX_SHOWN) this.shown.delete(this.shown.keys().next().value!);
    this.shown.set(key, { subject: limit.subject, limit });
  }

  /** The counters used lately and what they hold now (the cluster's when shared), for status and the console. */
  async status(): Promise<QuotaStatus | undefined> {
    const rules = this.rules();
    if (rules.limits === undefined && this.shown.size === 0) return undefined;
    // The limits the rules name for listed agents and the top level, then those counted lately
    // for other subjects (default's, grants'), the most recent first.
    const byKey = new Map<string, Shown>();
    for (const limit of namedLimits(rules)) {
      const spec = limit.spec;
      if (hasWindow(spec)) byKey.set(windowKey(limit.subject, spec.at, spec.windowMs), { subject: limit.subject, limit });
      if (hasInFlight(spec)) byKey.set(flightKey(limit.subject, spec.at), { subject: limit.subject, limit });
    }
    for (const [key, shown] of [...this.shown].reverse()) if (!byKey.has(key) && byKey.size < MAX_SHOWN * 2) byKey.set(key, shown);
    const entries = [...byKey];
    const windows = entries.flatMap(([key, s]) => {
      const spec = s.limit.spec;
      return key.startsWith(WINDOW) && hasWindow(spec) ? [{ key, windowMs: spec.windowMs, spec, s }] : [];
    });
    const flights = entries.flatMap(([key, s]) => {
      const spec = s.limit.spec;
      return key.startsWith(FLIGHT) && hasInFlight(spec) ? [{ key, spec, s }] : [];
    });
    const shared = this.shared;
    let counters: QuotaStatus['counters'] = shared === undefined ? 'local' : 'shared';
    let note: string | undefined;
    let reading = this.local.read(
      windows,
      flights.map((f) => f.key),
    );
    if (shared !== undefined) {
      try {
        if (!shared.up) throw new Error('Redis is down');
        reading = await shared.read(
          windows,
          flights.map((f) => f.key),
        );
      } catch (err) {
        counters = 'local';
        note = `the cluster's Redis cannot be asked (${err instanceof Error ? err.message : String(err)}): each worker counts its own calls`;
      }
    }
    const limits: QuotaCounterStatus[] = [
      ...windows.map((w, i): QuotaCounterStatus => ({
        subject: w.s.subject,
        rule: w.s.limit.spec.at,
        level: w.s.limit.level,
        kind: 'calls',
        limit: w.spec.calls,
        per: w.spec.per,
        used: reading.windows[i] ?? 0,
      })),
      ...flights.map((f, i): QuotaCounterStatus => ({
        subject: f.s.subject,
        rule: f.s.limit.spec.at,
        level: f.s.limit.level,
        kind: 'in_flight',
        limit: f.spec.inFlight,
        used: reading.inFlight[i] ?? 0,
      })),
    ];
    return { counters, ...(note !== undefined && { note }), local_checks: this.localChecks, limits };
  }
}

const WINDOW = 'w';
const FLIGHT = 'f';

/**
 * A counter's key: whose calls, which limit (its JSON path) and, for a window, its length. A reload
 * that keeps a limit where it was (and its window) keeps its counter and count; a changed number
 * applies from the next call.
 */
function windowKey(subject: string, at: string, windowMs: number): string {
  return WINDOW + JSON.stringify([subject, at, windowMs]);
}

function flightKey(subject: string, at: string): string {
  return FLIGHT + JSON.stringify([subject, at]);
}
