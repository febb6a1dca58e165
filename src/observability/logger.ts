// Structured, levelled logging to stderr (stdout belongs to the stdio transport). One JSON object per
// line, pino-style: cheap when a level is disabled (the check is one integer compare and no object is
// built), child loggers carry context (`server`, `agent`), and secret-looking fields are redacted.

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
    Object.assign(child, { state: this.state, context: { ...this.context, ...redact(fields) } });
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
    if (fields !== undefined) Object.assign(record, redact(fields));
    try {
      this.state.sink(JSON.stringify(record) + '\n');
    } catch {
      // A log line must never take the gateway down (e.g. stderr closed by the parent).
    }
  }
}

/** Top-level keys only: callers log flat fields (nested objects are not searched for secrets). */
function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) out[key] = REDACT.test(key) ? '[redacted]' : errorToJson(value);
  return out;
}

function errorToJson(value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return code === undefined ? { message: value.message } : { message: value.message, code };
  }
  return value;
}

/** A logger that drops everything (tests, library use). */
export const silentLogger = new Logger('silent');
