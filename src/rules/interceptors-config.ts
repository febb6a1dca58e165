// The `interceptors` section of gateway-rules.json (docs/guardrails.md "Interceptors"): which
// interceptor servers of `.mcp.json` judge which calls — for some agents, servers or tools (globs),
// some of its interceptors (by name or glob) and some events — and the invoker's policy over what
// each interceptor declares (`mode`, `failOpen`, `priorityHint`) plus its `timeoutMs`. Without the
// section every interceptor server judges every call with what its interceptors declare; with it,
// only the bindings listed do.

import { describeValue, isPlainObject } from '../config/issues.js';
import { compileMatcher, type Matcher } from './globs.js';

/** What the rules compiler lends: where errors and warnings go. */
interface InterceptorsContext {
  readonly error: (at: readonly PropertyKey[], message: string) => void;
  readonly warn: (at: readonly PropertyKey[], message: string) => void;
}

/** The invoker's policy for one binding; what is absent is the interceptor's own declaration. */
interface InterceptorPolicy {
  readonly mode?: 'active' | 'audit';
  readonly failOpen?: boolean;
  readonly priorityHint?: number;
  /** How long one invocation may take (default `DEFAULT_INTERCEPTOR_TIMEOUT_MS`). */
  readonly timeoutMs?: number;
}

/** One entry of the section, compiled. */
export interface InterceptorBinding {
  /** The interceptor server's name in `.mcp.json`'s `interceptors`. */
  readonly use: string;
  /** Whether the binding covers this call (agent, server, the server's tool; undefined tool: no tool). */
  readonly applies: (agent: string, server: string, tool: string | undefined) => boolean;
  /** Which of the server's interceptors it binds (undefined: all). */
  readonly names: Matcher | undefined;
  /** The events it narrows to (undefined: every event the interceptor hooks). */
  readonly events: ReadonlySet<string> | undefined;
  readonly policy: InterceptorPolicy;
}

export const DEFAULT_INTERCEPTOR_TIMEOUT_MS = 5_000;
const MAX_TIMEOUT_MS = 600_000;
const MAX_BINDINGS = 256;
const KEYS = new Set(['use', 'interceptors', 'agents', 'servers', 'tools', 'events', 'mode', 'failOpen', 'priorityHint', 'timeoutMs']);

/** The compiled section; undefined without one (every interceptor server binds every call). */
export function compileInterceptors(raw: unknown, ctx: InterceptorsContext): readonly InterceptorBinding[] | undefined {
  if (raw === undefined) return undefined;
  const at = ['interceptors'];
  if (!Array.isArray(raw)) {
    ctx.error(at, `expected an array of bindings, got ${describeValue(raw)}`);
    return undefined;
  }
  if (raw.length > MAX_BINDINGS) {
    ctx.error(at, `at most ${MAX_BINDINGS} bindings`);
    return undefined;
  }
  const bindings: InterceptorBinding[] = [];
  raw.forEach((entry: unknown, i) => {
    const binding = readBinding(entry, [...at, i], ctx);
    if (binding !== undefined) bindings.push(binding);
  });
  return Object.freeze(bindings);
}

function readBinding(entry: unknown, at: readonly PropertyKey[], ctx: InterceptorsContext): InterceptorBinding | undefined {
  if (!isPlainObject(entry)) {
    ctx.error(at, `expected an object, got ${describeValue(entry)}`);
    return undefined;
  }
  for (const key of Object.keys(entry)) if (!KEYS.has(key)) ctx.warn([...at, key], `unknown key ${JSON.stringify(key)} is ignored`);
  if (typeof entry.use !== 'string' || entry.use === '') {
    ctx.error([...at, 'use'], `expected the name of an interceptor server of .mcp.json, got ${describeValue(entry.use)}`);
    return undefined;
  }
  const agents = readGlobs(entry.agents, [...at, 'agents'], ctx);
  const servers = readGlobs(entry.servers, [...at, 'servers'], ctx);
  const tools = readGlobs(entry.tools, [...at, 'tools'], ctx);
  const names = readGlobs(entry.interceptors, [...at, 'interceptors'], ctx);
  const events = readGlobs(entry.events, [...at, 'events'], ctx);
  const policy: { -readonly [K in keyof InterceptorPolicy]: InterceptorPolicy[K] } = {};
  if (entry.mode !== undefined) {
    if (entry.mode === 'active' || entry.mode === 'audit') policy.mode = entry.mode;
    else ctx.error([...at, 'mode'], `expected "active" or "audit", got ${describeValue(entry.mode)}`);
  }
  if (entry.failOpen !== undefined) {
    if (typeof entry.failOpen === 'boolean') policy.failOpen = entry.failOpen;
    else ctx.error([...at, 'failOpen'], `expected true or false, got ${describeValue(entry.failOpen)}`);
  }
  if (entry.priorityHint !== undefined) {
    const hint = entry.priorityHint;
    if (typeof hint === 'number' && Number.isInteger(hint) && hint >= -2_147_483_648 && hint <= 2_147_483_647) policy.priorityHint = hint;
    else ctx.error([...at, 'priorityHint'], `expected a 32-bit whole number, got ${describeValue(hint)}`);
  }
  if (entry.timeoutMs !== undefined) {
    const ms = entry.timeoutMs;
    if (typeof ms === 'number' && Number.isInteger(ms) && ms >= 1 && ms <= MAX_TIMEOUT_MS) policy.timeoutMs = ms;
    else ctx.error([...at, 'timeoutMs'], `expected a whole number of milliseconds, 1 to ${MAX_TIMEOUT_MS}, got ${describeValue(ms)}`);
  }
  const matches = (matcher: Matcher | undefined, name: string | undefined): boolean =>
    matcher === undefined || (name !== undefined && (matcher.exact.has(name) || matcher.match(name) !== undefined));
  return Object.freeze({
    use: entry.use,
    applies: (agent: string, server: string, tool: string | undefined) =>
      matches(agents, agent) && matches(servers, server) && (tools === undefined || matches(tools, tool)),
    names,
    events: events === undefined ? undefined : new Set([...events.exact, ...events.patterns]),
    policy: Object.freeze(policy),
  });
}

/** A list of names and globs (one string is a list of one); undefined: every name. */
function readGlobs(value: unknown, at: readonly PropertyKey[], ctx: InterceptorsContext): Matcher | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || item === '')) {
    ctx.error(at, `expected a name or glob, or a list of them, got ${describeValue(value)}`);
    return undefined;
  }
  return compileMatcher(list as string[]);
}
