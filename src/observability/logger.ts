// Structured, levelled logging to stderr (stdout belongs to the stdio transport). One JSON object per
// line — or, for a person at a terminal, one short readable line (`--log-format pretty`) —
// pino-style: cheap when a level is disabled (the check is one integer compare and no object is
// built), child loggers carry context (`server`, `agent`), and secret-looking fields are redacted.
// An error field keeps its stack: always for an unexpected error (anything but a GatewayError, whose
// stable code already says what happened), and for a GatewayError only at debug level.

import { GatewayError } from '../errors.js';

const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const REDACT = /(authorization|token|secret|password|api[-_]?key|cookie)/i;

type LogFields = Record<string, unknown>;
type LogSink = (line: string) => void;

const LOG_FORMATS = ['json', 'pretty'] as const;
/** `json`: one object per line, for machines; `pretty`: `time level [server|agent] message key=value`, for people. */
type LogFormat = (typeof LOG_FORMATS)[number];

interface LogStyle {
  format: LogFormat;
  /** ANSI colours in `pretty` (a terminal that wants them). */
  colour?: boolean;
}

/**
 * What a person or a program at the other end of stderr wants: pretty (coloured unless NO_COLOR is
 * set) when stderr is a terminal, JSON otherwise; `asked` (`--log-format`) wins.
 */
export function logStyleFor(asked: LogFormat | undefined, stderrIsTty: boolean, env: NodeJS.ProcessEnv): LogStyle {
  const format = asked ?? (stderrIsTty ? 'pretty' : 'json');
  const colour =
    format === 'pretty' &&
    (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' ? true : stderrIsTty && env.NO_COLOR === undefined && env.TERM !== 'dumb');
  return { format, colour };
}

export function isLogFormat(value: string): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

const stderrSink: LogSink = (line) => {
  process.stderr.write(line);
};

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export class Logger {
  private readonly state: { rank: number; sink: LogSink; style: LogStyle };
  private readonly context: LogFields;

  constructor(level: LogLevel = 'info', sink: LogSink = stderrSink, context: LogFields = {}, style: LogStyle = { format: 'json' }) {
    this.state = { rank: RANK[level], sink, style };
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
      this.state.sink(
        this.state.style.format === 'pretty' ? pretty(record, this.state.style.colour === true) : JSON.stringify(record) + '\n',
      );
    } catch {
      // A log line must never take the gateway down (e.g. stderr closed by the parent).
    }
  }
}

const LEVEL_COLOUR: Record<string, string> = { debug: '\x1b[2m', info: '\x1b[36m', warn: '\x1b[33m', error: '\x1b[31m' };
const RESET = '\x1b[0m';
const DIM = '\x1b[2m';

/**
 * One line for a person: `12:04:05.123 INFO  [echo] message key=value …`, the server or agent in
 * brackets, other fields after the message, an error as its message (and its stack on the lines
 * below when it has one). The same redacted record as the JSON line, so nothing secret appears.
 */
function pretty(record: LogFields, colour: boolean): string {
  const { time, level, msg, server, agent, error, ...rest } = record;
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const tag = String(level).toUpperCase().padEnd(5);
  const who = [server, agent]
    .filter((v) => typeof v === 'string' && v !== '')
    .map((v) => `[${String(v)}]`)
    .join(' ');
  // A field the message already says (`url=…` after "listening on …", `tools=9` after "9 tools") is left out.
  const text = String(msg);
  const said = ([key, value]: [string, unknown]): boolean =>
    (typeof value === 'string' && value.length >= 4 && text.includes(value)) ||
    (typeof value === 'number' && text.includes(`${value} ${key}`));
  const extra = Object.entries(rest)
    .filter((entry) => !said(entry))
    .map(
      ([key, value]) =>
        `${key}=${typeof value === 'string' ? (/[\s"=]/.test(value) ? JSON.stringify(value) : value) : JSON.stringify(value)}`,
    )
    .join(' ');
  let problem = '';
  let stack = '';
  if (error !== undefined) {
    const e = error as { message?: unknown; code?: unknown; stack?: unknown };
    problem =
      typeof e === 'object' && e !== null && typeof e.message === 'string'
        ? `: ${e.message}${typeof e.code === 'string' ? ` (${e.code})` : ''}`
        : `: ${JSON.stringify(error)}`;
    if (typeof e === 'object' && e !== null && typeof e.stack === 'string') stack = '\n' + e.stack.split('\n').slice(1).join('\n');
  }
  const head = colour ? `${DIM}${clock}${RESET} ${LEVEL_COLOUR[String(level)] ?? ''}${tag}${RESET}` : `${clock} ${tag}`;
  const tail = extra === '' ? '' : colour ? ` ${DIM}${extra}${RESET}` : ` ${extra}`;
  return `${head} ${who === '' ? '' : who + ' '}${String(msg)}${problem}${tail}${stack}\n`;
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
