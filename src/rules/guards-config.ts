// The `guards` section of gateway-rules.json (docs/guardrails.md): what the built-in guards look
// for in a call's arguments and a server's answers, and what they do with it, for every call or, in
// `where` entries, for some agents, servers or tools (globs). Validated here with JSON paths and
// compiled into the guards room's `GuardBook`; `"guards": false` turns every guard off. Without the
// section (or without a rules file) the defaults hold: guards/guard-settings.ts
// `DEFAULT_GUARD_SETTINGS`.

import { describeValue, isPlainObject } from '../config/issues.js';
import { DEFAULT_GUARD_SETTINGS, patchSettings, type GuardPatch, type GuardSetting, type GuardSettings } from '../guards/guard-settings.js';
import { DEFAULT_KEEP_BOUNDS, GuardBook, type GuardRule, type KeepBounds } from '../guards/guard-plan.js';
import { PII_PRESET_IDS } from '../guards/pii-presets.js';
import { SECRET_FORMATS } from '../guards/secret-formats.js';
import { compileMatcher, type Matcher } from './globs.js';

/** What the rules compiler lends: where errors and warnings go. */
interface GuardsContext {
  readonly error: (at: readonly PropertyKey[], message: string) => void;
  readonly warn: (at: readonly PropertyKey[], message: string) => void;
}

const TOP_KEYS = new Set(['secrets', 'pii', 'injection', 'maxResultBytes', 'keepResults', 'where']);
const WHERE_KEYS = new Set(['agents', 'servers', 'tools', 'secrets', 'pii', 'injection', 'maxResultBytes']);
const KEEP_KEYS = new Set(['seconds', 'maxBytes']);
/** The smallest cap: a note and a head must fit. */
const MIN_RESULT_BYTES = 1024;
const SECRETS_KEYS = new Set(['arguments', 'results', 'entropy', 'formats']);
const PII_KEYS = new Set(['presets', 'arguments', 'results']);
const INJECTION_KEYS = new Set(['results']);
const SETTINGS: ReadonlySet<string> = new Set(['redact', 'block', 'audit', 'off']);
const RESULT_INJECTION: ReadonlySet<string> = new Set(['flag', 'mark', 'block', 'off']);
const FORMAT_IDS: ReadonlySet<string> = new Set(SECRET_FORMATS.map((d) => d.id));
const MAX_WHERE = 256;

/** The guards every call passes (`GuardBook`), or undefined when the rules turn them off. */
export const DEFAULT_GUARDS = new GuardBook(DEFAULT_GUARD_SETTINGS, []);

export function compileGuards(raw: unknown, ctx: GuardsContext): GuardBook | undefined {
  if (raw === undefined) return DEFAULT_GUARDS;
  if (raw === false) return undefined;
  const at = ['guards'];
  if (!isPlainObject(raw)) {
    ctx.error(at, `expected an object or false, got ${describeValue(raw)}`);
    return DEFAULT_GUARDS;
  }
  unknownKeys(raw, TOP_KEYS, at, ctx);
  const settings: GuardSettings = patchSettings(DEFAULT_GUARD_SETTINGS, readPatch(raw, at, ctx));
  const rules: GuardRule[] = [];
  if (raw.where !== undefined) {
    if (!Array.isArray(raw.where)) ctx.error([...at, 'where'], `expected an array of entries, got ${describeValue(raw.where)}`);
    else if (raw.where.length > MAX_WHERE) ctx.error([...at, 'where'], `at most ${MAX_WHERE} entries`);
    else
      raw.where.forEach((entry: unknown, i) => {
        const rule = readWhere(entry, [...at, 'where', i], ctx);
        if (rule !== undefined) rules.push(rule);
      });
  }
  return new GuardBook(settings, Object.freeze(rules), readKept(raw.keepResults, [...at, 'keepResults'], ctx));
}

/** `keepResults`: how long and within how many bytes results over their cap are kept (guard-plan.ts defaults). */
function readKept(raw: unknown, at: readonly PropertyKey[], ctx: GuardsContext): KeepBounds {
  const entry = section(raw, at, KEEP_KEYS, ctx);
  if (entry === undefined) return DEFAULT_KEEP_BOUNDS;
  const whole = (key: string, min: number, fallback: number): number => {
    const value = entry[key];
    if (value === undefined) return fallback;
    if (typeof value === 'number' && Number.isInteger(value) && value >= min) return value;
    ctx.error([...at, key], `expected a whole number, at least ${min}, got ${describeValue(value)}`);
    return fallback;
  };
  return Object.freeze({
    seconds: whole('seconds', 1, DEFAULT_KEEP_BOUNDS.seconds),
    maxBytes: whole('maxBytes', MIN_RESULT_BYTES, DEFAULT_KEEP_BOUNDS.maxBytes),
  });
}

function readWhere(entry: unknown, at: readonly PropertyKey[], ctx: GuardsContext): GuardRule | undefined {
  if (!isPlainObject(entry)) {
    ctx.error(at, `expected an object, got ${describeValue(entry)}`);
    return undefined;
  }
  unknownKeys(entry, WHERE_KEYS, at, ctx);
  const agents = readGlobs(entry.agents, [...at, 'agents'], ctx);
  const servers = readGlobs(entry.servers, [...at, 'servers'], ctx);
  const tools = readGlobs(entry.tools, [...at, 'tools'], ctx);
  const patch = readPatch(entry, at, ctx);
  const matches = (matcher: Matcher | undefined, name: string | undefined): boolean =>
    matcher === undefined || (name !== undefined && (matcher.exact.has(name) || matcher.match(name) !== undefined));
  return Object.freeze({
    applies: (agent: string, server: string, tool: string | undefined) =>
      matches(agents, agent) && matches(servers, server) && matches(tools, tool),
    patch,
  });
}

/** A list of names and globs (one string is a list of one); undefined: every name. */
function readGlobs(value: unknown, at: readonly PropertyKey[], ctx: GuardsContext): Matcher | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || item === '')) {
    ctx.error(at, `expected a name or glob, or a list of them, got ${describeValue(value)}`);
    return undefined;
  }
  return compileMatcher(list as string[]);
}

function readPatch(raw: Record<string, unknown>, at: readonly PropertyKey[], ctx: GuardsContext): GuardPatch {
  const patch: {
    secrets?: GuardPatch['secrets'];
    pii?: GuardPatch['pii'];
    injection?: GuardPatch['injection'];
    maxResultBytes?: number;
  } = {};
  const cap = raw.maxResultBytes;
  if (cap !== undefined) {
    if (typeof cap !== 'number' || !Number.isInteger(cap) || cap < MIN_RESULT_BYTES)
      ctx.error([...at, 'maxResultBytes'], `expected a whole number of bytes, at least ${MIN_RESULT_BYTES}, got ${describeValue(cap)}`);
    else patch.maxResultBytes = cap;
  }
  const secrets = section(raw.secrets, [...at, 'secrets'], SECRETS_KEYS, ctx);
  if (secrets !== undefined) {
    const formats: Record<string, GuardSetting> = {};
    const listed = section(secrets.formats, [...at, 'secrets', 'formats'], undefined, ctx);
    for (const [id, value] of Object.entries(listed ?? {})) {
      if (!FORMAT_IDS.has(id)) {
        ctx.error([...at, 'secrets', 'formats', id], `unknown secret format; known: ${[...FORMAT_IDS].join(', ')}`);
        continue;
      }
      const setting = oneOf(value, SETTINGS, [...at, 'secrets', 'formats', id], ctx);
      if (setting !== undefined) formats[id] = setting as GuardSetting;
    }
    patch.secrets = {
      ...setting(secrets, 'arguments', SETTINGS, [...at, 'secrets'], ctx),
      ...setting(secrets, 'results', SETTINGS, [...at, 'secrets'], ctx),
      ...flag(secrets, 'entropy', [...at, 'secrets'], ctx),
      formats,
    };
  }
  const pii = section(raw.pii, [...at, 'pii'], PII_KEYS, ctx);
  if (pii !== undefined) {
    let presets: string[] | undefined;
    if (pii.presets !== undefined) {
      if (!Array.isArray(pii.presets) || pii.presets.some((p) => typeof p !== 'string' || !PII_PRESET_IDS.has(p)))
        ctx.error([...at, 'pii', 'presets'], `expected a list of presets among ${[...PII_PRESET_IDS].join(', ')}`);
      else presets = pii.presets as string[];
    }
    patch.pii = {
      ...(presets !== undefined && { presets }),
      ...setting(pii, 'arguments', SETTINGS, [...at, 'pii'], ctx),
      ...setting(pii, 'results', SETTINGS, [...at, 'pii'], ctx),
    };
  }
  const injection = section(raw.injection, [...at, 'injection'], INJECTION_KEYS, ctx);
  if (injection !== undefined)
    patch.injection = {
      ...setting(injection, 'results', RESULT_INJECTION, [...at, 'injection'], ctx),
    };
  return patch;
}

function section(
  value: unknown,
  at: readonly PropertyKey[],
  keys: ReadonlySet<string> | undefined,
  ctx: GuardsContext,
): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    ctx.error(at, `expected an object, got ${describeValue(value)}`);
    return undefined;
  }
  if (keys !== undefined) unknownKeys(value, keys, at, ctx);
  return value;
}

function setting(
  raw: Record<string, unknown>,
  key: string,
  allowed: ReadonlySet<string>,
  at: readonly PropertyKey[],
  ctx: GuardsContext,
): Record<string, string> {
  const value = oneOf(raw[key], allowed, [...at, key], ctx);
  return value === undefined ? {} : { [key]: value };
}

function flag(raw: Record<string, unknown>, key: string, at: readonly PropertyKey[], ctx: GuardsContext): Record<string, boolean> {
  const value = raw[key];
  if (value === undefined) return {};
  if (typeof value !== 'boolean') {
    ctx.error([...at, key], `expected true or false, got ${describeValue(value)}`);
    return {};
  }
  return { [key]: value };
}

function oneOf(value: unknown, allowed: ReadonlySet<string>, at: readonly PropertyKey[], ctx: GuardsContext): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !allowed.has(value)) {
    ctx.error(at, `expected one of ${[...allowed].map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(value, true)}`);
    return undefined;
  }
  return value;
}

function unknownKeys(raw: Record<string, unknown>, keys: ReadonlySet<string>, at: readonly PropertyKey[], ctx: GuardsContext): void {
  for (const key of Object.keys(raw)) if (!keys.has(key)) ctx.warn([...at, key], `unknown key ${JSON.stringify(key)} is ignored`);
}
