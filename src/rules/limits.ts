// Quotas and rate limits in `gateway-rules.json` (`limits`): their shape, validation (every problem
// with its JSON path, through the caller's `error`/`warn`) and compilation into `CompiledLimits`.
// Which limits apply to one call is limits-match.ts; counting them is the policy room's (policy/quotas.ts).
// One shape wherever limits may sit (the top level, an agent's entry, a grant; the room's README):
//
//   "limits": {
//     "calls": 100, "per": "1m",          every call of the agent, 100 per fixed minute
//     "inFlight": 4,                      at most 4 of its calls on servers at once
//     "servers": {"github": {…}, "db-*": {…}},            each server (name or glob): the same fields
//     "tools": {"github": {"create_*": {…}, "search": {…}}} each tool of a server (name or glob)
//   }

import { describeValue, isPlainObject, jsonPath } from '../config/issues.js';
import { frozenMap } from './frozen.js';
import { compileMatcher, globToRegExp, isGlob, type Matcher } from './globs.js';

/** A limit's calls per window: how many, the window's length (fixed windows aligned to the epoch), and as written. */
interface PerWindow {
  readonly calls: number;
  readonly windowMs: number;
  /** The window as written (`"1m"`), for messages and status. */
  readonly per: string;
}

/** A limit without a window: its window fields are there, and undefined. */
interface NoWindow {
  readonly calls: undefined;
  readonly windowMs: undefined;
  readonly per: undefined;
}

/**
 * One limit as written, by its kind: calls per window (`window`), calls on servers at once
 * (`in_flight`), or both. `at` names it: the JSON path of the spec in the rules file, its name in
 * errors, status and counter keys. Every kind has every field (undefined where it has none), so a
 * reader narrows by `kind` and never asserts.
 */
export type LimitSpec =
  | (PerWindow & { readonly kind: 'window'; readonly at: string; readonly inFlight: undefined })
  | (NoWindow & { readonly kind: 'in_flight'; readonly at: string; readonly inFlight: number })
  | (PerWindow & { readonly kind: 'both'; readonly at: string; readonly inFlight: number });

/** The limits of a spec that count calls per window. */
type WindowLimitSpec = Extract<LimitSpec, { readonly kind: 'window' | 'both' }>;
/** The limits of a spec that count calls in flight. */
type FlightLimitSpec = Extract<LimitSpec, { readonly kind: 'in_flight' | 'both' }>;

export function hasWindow(spec: LimitSpec): spec is WindowLimitSpec {
  return spec.kind !== 'in_flight';
}

export function hasInFlight(spec: LimitSpec): spec is FlightLimitSpec {
  return spec.kind !== 'window';
}

/** Specs by exact name and by glob: the exact name first, else the first glob (file order) that matches. */
export interface NamedLimits {
  readonly matcher: Matcher;
  readonly byName: ReadonlyMap<string, LimitSpec>;
}

/** The limits of one place of the file (the top level, an agent's entry, a grant). */
export interface LimitSet {
  /** Every call this set covers. */
  readonly all: LimitSpec | undefined;
  readonly servers: NamedLimits | undefined;
  /** Server name (exact) → its tools' limits. */
  readonly tools: ReadonlyMap<string, NamedLimits>;
}

export interface CompiledLimits {
  /** Top-level `limits`: one counter shared by every agent. */
  readonly gateway: LimitSet | undefined;
  /** Entry id of `agents` → its limits (counted per agent id). */
  readonly agents: ReadonlyMap<string, LimitSet>;
  /** Grant name → its limits (counted per agent id). */
  readonly grants: ReadonlyMap<string, LimitSet>;
}

/** Where a set of limits sits, which says whose calls each of its counters counts. */
type LimitOwner = { kind: 'gateway' } | { kind: 'agent'; id: string } | { kind: 'grant'; id: string };

interface LimitsReport {
  error(this: void, at: readonly PropertyKey[], message: string): void;
  warn(this: void, at: readonly PropertyKey[], message: string): void;
  /** The servers `.mcp.json` defines (a limit naming another is a warning, as elsewhere in the rules). */
  readonly servers: ReadonlySet<string>;
}

const SET_KEYS = new Set(['calls', 'per', 'inFlight', 'servers', 'tools']);
const SPEC_KEYS = new Set(['calls', 'per', 'inFlight']);
/** `per`: a whole number and a unit. */
const DURATION = /^([1-9][0-9]{0,8})(ms|s|m|h|d)$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Windows from a tenth of a second (tests, bursts) to a day (daily quotas). */
const MIN_WINDOW_MS = 100;
const MAX_WINDOW_MS = 86_400_000;
const MAX_CALLS = 1_000_000_000;
const MAX_IN_FLIGHT = 1_000_000;
/** Entries per `servers`/`tools` map: limits are few; a huge map is a mistake, not a policy. */
const MAX_ENTRIES = 1000;
const EXAMPLE = '{"calls": 100, "per": "1m"} and/or {"inFlight": 4}';

/** `"1m"` → 60000; undefined when it is not a duration mcpgate takes. */
function parseWindow(text: string): number | undefined {
  const found = DURATION.exec(text);
  if (found === null) return undefined;
  const ms = Number(found[1]) * UNIT_MS[found[2]!]!;
  return ms >= MIN_WINDOW_MS && ms <= MAX_WINDOW_MS ? ms : undefined;
}

/** Collects the limits of every place of one rules file while schema.ts validates it. */
export class LimitsBuilder {
  private gateway: LimitSet | undefined;
  private readonly agents = new Map<string, LimitSet>();
  private readonly grants = new Map<string, LimitSet>();

  constructor(private readonly report: LimitsReport) {}

  /** Reads `value` (the `limits` at `at`) for `owner`; nothing when it is absent or invalid. */
  read(owner: LimitOwner, at: readonly PropertyKey[], value: unknown): void {
    if (value === undefined) return;
    const set = this.readSet(at, value);
    if (set === undefined) return;
    if (owner.kind === 'gateway') this.gateway = set;
    else (owner.kind === 'agent' ? this.agents : this.grants).set(owner.id, set);
  }

  /** The compiled limits, frozen; undefined when the file has none (the hot path then checks nothing). */
  build(): CompiledLimits | undefined {
    if (this.gateway === undefined && this.agents.size === 0 && this.grants.size === 0) return undefined;
    return Object.freeze({ gateway: this.gateway, agents: frozenMap(this.agents), grants: frozenMap(this.grants) });
  }

  private readSet(at: readonly PropertyKey[], value: unknown): LimitSet | undefined {
    const { error, warn } = this.report;
    if (!isPlainObject(value)) {
      error(at, `expected an object such as ${EXAMPLE}, optionally with "servers" and "tools", got ${describeValue(value)}`);
      return undefined;
    }
    for (const key of Object.keys(value))
      if (!SET_KEYS.has(key))
        warn([...at, key], `unknown key ${JSON.stringify(key)} in limits is ignored (expected calls, per, inFlight, servers, tools)`);
    const ownFields = value.calls !== undefined || value.per !== undefined || value.inFlight !== undefined;
    let failed = false;
    const all = ownFields ? this.readSpec(at, value, false) : undefined;
    if (ownFields && all === undefined) failed = true;
    let servers: NamedLimits | undefined;
    if (value.servers !== undefined) {
      servers = this.readNamed([...at, 'servers'], value.servers, 'server');
      if (servers === undefined) failed = true;
    }
    const tools = new Map<string, NamedLimits>();
    const toolMap = value.tools;
    if (toolMap !== undefined && !isPlainObject(toolMap)) {
      error([...at, 'tools'], `expected an object mapping server names to {TOOL: ${EXAMPLE}}, got ${describeValue(toolMap)}`);
      failed = true;
    } else if (toolMap !== undefined) {
      for (const [server, named] of Object.entries(toolMap)) {
        const where = [...at, 'tools', server];
        if (server === '' || isGlob(server)) {
          error(
            where,
            server === ''
              ? 'a server name must not be empty'
              : `a server of "tools" is named exactly (as in allow.tools); use "servers" for a pattern such as ${JSON.stringify(server)}`,
          );
          failed = true;
          continue;
        }
        if (!this.report.servers.has(server)) warn(where, `limits name server ${JSON.stringify(server)}, which .mcp.json does not define`);
        const read = this.readNamed(where, named, 'tool');
        if (read === undefined) failed = true;
        else tools.set(server, read);
      }
    }
    if (failed) return undefined;
    if (all === undefined && servers === undefined && tools.size === 0)
      warn(at, 'limits with no calls, inFlight, servers or tools limit nothing');
    return Object.freeze({ all, servers, tools: frozenMap(tools) });
  }

  private readNamed(at: readonly PropertyKey[], value: unknown, what: 'server' | 'tool'): NamedLimits | undefined {
    if (!isPlainObject(value)) {
      this.report.error(at, `expected an object mapping ${what} names or patterns to ${EXAMPLE}, got ${describeValue(value)}`);
      return undefined;
    }
    const entries = Object.entries(value);
    if (entries.length > MAX_ENTRIES) {
      this.report.error(at, `expected at most ${MAX_ENTRIES} ${what}s, got ${entries.length}`);
      return undefined;
    }
    const byName = new Map<string, LimitSpec>();
    let failed = false;
    for (const [name, spec] of entries) {
      const where = [...at, name];
      if (name === '') {
        this.report.error(where, `a ${what} name or pattern must not be empty`);
        failed = true;
        continue;
      }
      if (what === 'server') this.checkServer(name, where);
      const read = this.readSpec(where, spec, true);
      if (read === undefined) failed = true;
      else byName.set(name, read);
    }
    if (failed) return undefined;
    return Object.freeze({ matcher: compileMatcher([...byName.keys()]), byName: frozenMap(byName) });
  }

  private checkServer(name: string, at: readonly PropertyKey[]): void {
    const servers = this.report.servers;
    if (name === '*' || servers.has(name)) return;
    if (!isGlob(name)) return this.report.warn(at, `limits name server ${JSON.stringify(name)}, which .mcp.json does not define`);
    const regex = globToRegExp(name);
    for (const server of servers) if (regex.test(server)) return;
    this.report.warn(at, `limits name server pattern ${JSON.stringify(name)}, which matches no server .mcp.json defines`);
  }

  /** One spec (`strict`: only calls/per/inFlight; a set's own fields sit beside servers/tools). */
  private readSpec(at: readonly PropertyKey[], value: unknown, strict: boolean): LimitSpec | undefined {
    const { error, warn } = this.report;
    if (!isPlainObject(value)) {
      error(at, `expected a limit such as ${EXAMPLE}, got ${describeValue(value)}`);
      return undefined;
    }
    if (strict)
      for (const key of Object.keys(value))
        if (!SPEC_KEYS.has(key))
          warn([...at, key], `unknown key ${JSON.stringify(key)} in a limit is ignored (expected calls, per, inFlight)`);
    let ok = true;
    const calls = value.calls;
    const per = value.per;
    const inFlight = value.inFlight;
    if (calls !== undefined && !(Number.isInteger(calls) && (calls as number) >= 1 && (calls as number) <= MAX_CALLS)) {
      error([...at, 'calls'], `expected a whole number of calls from 1 to ${MAX_CALLS}, got ${describeValue(calls)}`);
      ok = false;
    }
    let windowMs: number | undefined;
    if (per !== undefined) {
      windowMs = typeof per === 'string' ? parseWindow(per) : undefined;
      if (windowMs === undefined) {
        error(
          [...at, 'per'],
          `expected a window such as "500ms", "10s", "1m", "1h" or "1d" (from ${MIN_WINDOW_MS} ms to a day), got ${describeValue(per, true)}`,
        );
        ok = false;
      }
    }
    if (calls !== undefined && per === undefined) {
      error(at, `"calls" needs "per", the window it counts in (e.g. {"calls": ${typeof calls === 'number' ? calls : 100}, "per": "1m"})`);
      ok = false;
    }
    if (per !== undefined && calls === undefined) {
      error(at, '"per" needs "calls", how many calls its window allows');
      ok = false;
    }
    if (inFlight !== undefined && !(Number.isInteger(inFlight) && (inFlight as number) >= 1 && (inFlight as number) <= MAX_IN_FLIGHT)) {
      error([...at, 'inFlight'], `expected a whole number of calls in flight from 1 to ${MAX_IN_FLIGHT}, got ${describeValue(inFlight)}`);
      ok = false;
    }
    if (calls === undefined && per === undefined && inFlight === undefined) {
      error(at, `a limit needs "calls" with "per", or "inFlight": ${EXAMPLE}`);
      ok = false;
    }
    if (!ok) return undefined;
    const path = jsonPath(at);
    // Checked above: a window has calls, per and its length together; inFlight is a whole number.
    const window = typeof calls === 'number' && typeof per === 'string' && windowMs !== undefined ? { calls, windowMs, per } : undefined;
    const flight = typeof inFlight === 'number' ? inFlight : undefined;
    if (window !== undefined && flight !== undefined)
      return Object.freeze({ kind: 'both', at: path, ...window, inFlight: flight } satisfies LimitSpec);
    if (window !== undefined) return Object.freeze({ kind: 'window', at: path, ...window, inFlight: undefined } satisfies LimitSpec);
    if (flight !== undefined)
      return Object.freeze({
        kind: 'in_flight',
        at: path,
        calls: undefined,
        windowMs: undefined,
        per: undefined,
        inFlight: flight,
      } satisfies LimitSpec);
    return undefined;
  }
}
