// Structured, levelled logging to stderr (stdout belongs to the stdio transport). One JSON object per
// line, pino-style: cheap when a level is disabled (the check is one integer compare and no object is
// built), child loggers carry context (`server`, `agent`), and secret-looking fields are redacted.
// An error field keeps its stack: always for an unexpected error (anything but a GatewayError, whose
// stable code already says what happened), and for a GatewayError only at debug level (hardening §7).

import { GatewayError } from '../errors.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const REDACT = /(authorization|token|secret|password|api[-_]?key|cookie)/i;

export type LogFields = Record<string, unknown>;
export type LogSink = (line: string) => void;

const stderrSink: LogSink = (line) => {
  process.stderr.write(line);
};

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export class Logger {
  private readonly state: { rank: number; sink: LogSink };
  private readonly context: LogFields;

  constructor(level: LogLevel = 'info', sink: LogSink = stderrSink, context: LogFields = {}) {
    this.state = { rank: RANK[level], sink };
    this.context = context;
  }

  /** A logger that adds `fields` to every line; it shares its parent's level and sink. */
  child(fields: LogFields): Logger {
    const child = Object.create(Logger.prototype) as Logger;
    Object.assign(child, { state: this.state, context: { ...this.context, ...redact(fields, this.state.rank <= RANK.debug) } });
    return child;
  }

  setLevel(level: LogLevel): void {
    this.state.rank = RANK[level];
  }

  enabled(level: Exclude<LogLevel, 'silent'>): boolean {
    return RANK[level] >= this.state.rank;
  }

  debug(msg: string, fields?: LogFields): void {
    if (RANK.debug >= this.state.rank) this.write('debug', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    if (RANK.info >= this.state.rank) this.write('info', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    if (RANK.warn >= this.state.rank) this.write('warn', msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    if (RANK.error >= this.state.rank) this.write('error', msg, fields);
  }

  private write(level: LogLevel, msg: string, fields: LogFields | undefined): void {
    const record: LogFields = { time: new Date().toISOString(), level, msg, ...this.context };
    if (fields !== undefined) Object.assign(record, redact(fields, this.state.rank <= RANK.debug));
    try {
      this.state.sink(JSON.stringify(record) + '\n');
    } catch {
      // A log line must never take the gateway down (e.g. stderr closed by the parent).
    }
  }
}

/** Top-level keys only: callers log flat fields (nested objects are not searched for secrets). */
function redact(fields: LogFields, debug: boolean): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) out[key] = REDACT.test(key) ? '[redacted]' : errorToJson(value, debug, 0);
  return out;
}

/** How many `cause` links are followed (a cycle of causes must not loop). */
const MAX_CAUSES = 3;

/**
 * `{message, code?, stack?, cause?}`. An expected error (GatewayError: a named, documented failure)
 * carries its stack only at debug level; any other error is a bug or an I/O surprise, so it always does.
 */
function errorToJson(value: unknown, debug: boolean, depth: number): unknown {
  if (!(value instanceof Error)) return value;
  const out: Record<string, unknown> = { message: value.message };
  const code = (value as { code?: unknown }).code;
  if (code !== undefined) out.code = code;
  const expected = value instanceof GatewayError;
  if ((debug || !expected) && typeof value.stack === 'string') out.stack = value.stack;
  if (value.cause !== undefined && depth < MAX_CAUSES) out.cause = errorToJson(value.cause, debug, depth + 1);
  return out;
}

/** A logger that drops everything (tests, library use). */
export const silentLogger = new Logger('silent');
