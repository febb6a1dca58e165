// The field-by-field settings of `.mcp.json`: `"limits"` (top level for every server, or in a server
// for that one) and a pooled server's `"pool"` (with its `healthCheck`), each over its defaults.
// Wrong values are errors, unknown names warnings.

import { DEFAULT_HEALTH_CHECK, DEFAULT_POOL } from './types.js';
import type { ConfigIssue, HealthCheckSettings, PoolSettings, ServerLimits, SharingMode } from './types.js';
import { describeValue, isPlainObject, jsonPath } from './issues.js';
import { MAX_TIMEOUT_MS } from './mcp-json-schema.js';
import type { Context } from './read-context.js';

/**
 * The session scope and, for the pooled scopes, the pool's settings (defaults where absent). A
 * `"pool"` on a shared server would be ignored, so it is a warning that says so.
 */
export function sessionsAndPool(
  name: string,
  sessions: SharingMode,
  raw: unknown,
  ctx: Context,
): { sessions: SharingMode; pool?: PoolSettings } {
  const at = ['mcpServers', name, 'pool'];
  if (sessions === 'shared') {
    if (raw !== undefined)
      ctx.warnings.push({
        file: ctx.file,
        path: jsonPath(at),
        message: `"pool" is ignored: server "${name}" has one shared session (set "sessions" to "per-agent" or "per-session" to pool them)`,
      });
    return { sessions };
  }
  return { sessions, pool: readPool(raw, at, ctx) };
}

const POOL_FIELDS: Readonly<Record<'idleMs' | 'ttlMs' | 'max', { min: number; max: number; what: string }>> = {
  idleMs: { min: 1, max: MAX_TIMEOUT_MS, what: `a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS})` },
  ttlMs: { min: 1, max: MAX_TIMEOUT_MS, what: `a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS})` },
  max: { min: 1, max: 10_000, what: 'a whole number of connections from 1 to 10000' },
};

/** A settings object while it is read, frozen once whole. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function readPool(raw: unknown, at: readonly PropertyKey[], ctx: Context): PoolSettings {
  if (raw === undefined) return DEFAULT_POOL;
  const issue = (segments: readonly PropertyKey[], message: string): ConfigIssue => ({
    file: ctx.file,
    path: jsonPath([...at, ...segments]),
    message,
  });
  if (!isPlainObject(raw)) {
    ctx.errors.push(issue([], `expected an object such as {"idleMs": 600000, "ttlMs": 86400000, "max": 32}, got ${describeValue(raw)}`));
    return DEFAULT_POOL;
  }
  const out: Mutable<PoolSettings> = { ...DEFAULT_POOL };
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'healthCheck') {
      const check = readHealthCheck(
        value,
        (segments, message) => ctx.errors.push(issue(['healthCheck', ...segments], message)),
        (segments, message) => ctx.warnings.push(issue(['healthCheck', ...segments], message)),
      );
      if (check !== undefined) out.healthCheck = check;
      continue;
    }
    const field = Object.hasOwn(POOL_FIELDS, key) ? POOL_FIELDS[key as keyof typeof POOL_FIELDS] : undefined;
    if (field === undefined) {
      ctx.warnings.push(
        issue([key], `unknown pool setting "${key}" is ignored (known: ${[...Object.keys(POOL_FIELDS), 'healthCheck'].join(', ')})`),
      );
      continue;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < field.min || value > field.max) {
      ctx.errors.push(issue([key], `expected ${field.what}, got ${describeValue(value)}`));
      continue;
    }
    out[key as keyof typeof POOL_FIELDS] = value;
  }
  return Object.freeze(out);
}

type Report = (segments: readonly PropertyKey[], message: string) => void;

/** `pool.healthCheck`: `true` (the defaults), `false` (off), or `{"idleMs", "timeoutMs"}`. */
function readHealthCheck(raw: unknown, error: Report, warn: Report): HealthCheckSettings | undefined {
  if (raw === false) return undefined;
  if (raw === true) return DEFAULT_HEALTH_CHECK;
  if (!isPlainObject(raw)) {
    error(
      [],
      `expected true, false or an object such as {"idleMs": ${DEFAULT_HEALTH_CHECK.idleMs}, "timeoutMs": ${DEFAULT_HEALTH_CHECK.timeoutMs}}, got ${describeValue(raw)}`,
    );
    return undefined;
  }
  const out: Mutable<HealthCheckSettings> = { ...DEFAULT_HEALTH_CHECK };
  const fields: Record<string, { min: number; what: string }> = {
    idleMs: { min: 0, what: `a whole number of milliseconds from 0 (check before every reuse) to ${MAX_TIMEOUT_MS}` },
    timeoutMs: { min: 1, what: `a positive whole number of milliseconds (at most ${MAX_TIMEOUT_MS})` },
  };
  for (const [key, value] of Object.entries(raw)) {
    const field = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (field === undefined) {
      warn([key], `unknown health check setting "${key}" is ignored (known: idleMs, timeoutMs)`);
      continue;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < field.min || value > MAX_TIMEOUT_MS) {
      error([key], `expected ${field.what}, got ${describeValue(value)}`);
      continue;
    }
    out[key as keyof HealthCheckSettings] = value;
  }
  return Object.freeze(out);
}

const LIMIT_FIELDS: Readonly<Record<keyof ServerLimits, { min: number; max: number; what: string }>> = {
  maxTools: { min: 0, max: Number.MAX_SAFE_INTEGER, what: 'a whole number of tools, 0 or more' },
  maxResources: { min: 0, max: Number.MAX_SAFE_INTEGER, what: 'a whole number of resources, 0 or more' },
  maxPrompts: { min: 0, max: Number.MAX_SAFE_INTEGER, what: 'a whole number of prompts, 0 or more' },
  maxSchemaBytes: { min: 1, max: Number.MAX_SAFE_INTEGER, what: 'a positive whole number of bytes' },
  maxCallMs: { min: 1, max: MAX_TIMEOUT_MS, what: `a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS})` },
};

/**
 * A `"limits"` object (top level: gateway-wide; in a server: that server's) over `base`; absent
 * fields keep `base`. Wrong values are errors, unknown keys warnings, like every other field.
 */
export function readLimits(raw: unknown, base: ServerLimits, at: readonly PropertyKey[], ctx: Context): ServerLimits {
  if (raw === undefined) return base;
  const issue = (segments: readonly PropertyKey[], message: string): ConfigIssue => ({
    file: ctx.file,
    path: jsonPath([...at, ...segments]),
    message,
  });
  if (!isPlainObject(raw)) {
    ctx.errors.push(issue([], `expected an object such as {"maxTools": 1000, "maxSchemaBytes": 262144}, got ${describeValue(raw)}`));
    return base;
  }
  const out: Mutable<ServerLimits> = { ...base };
  for (const [key, value] of Object.entries(raw)) {
    const field = Object.hasOwn(LIMIT_FIELDS, key) ? LIMIT_FIELDS[key as keyof ServerLimits] : undefined;
    if (field === undefined) {
      ctx.warnings.push(issue([key], `unknown limit "${key}" is ignored (known: ${Object.keys(LIMIT_FIELDS).join(', ')})`));
      continue;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < field.min || value > field.max) {
      ctx.errors.push(issue([key], `expected ${field.what}, got ${describeValue(value)}`));
      continue;
    }
    out[key as keyof ServerLimits] = value;
  }
  return Object.freeze(out);
}
