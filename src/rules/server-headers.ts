// An agent's own credentials for remote servers: `"serverHeaders": {SERVER: {NAME: VALUE}}`
// in an agent's entry of the rules file. The rules file, not `.mcp.json`, holds them because they
// belong to an identity: the rules already say who an agent is and what it may use, and a reload
// swaps both at once. Values are expanded from mcpgate's environment (`${VAR}`) here, at load, and
// never leave the compiled snapshot except as the headers of that agent's own pooled connection
// (servers/pool.ts); they are never logged, echoed in an error or shown in status.

// Only a remote server whose sessions belong to one agent (`"per-agent"` or `"per-session"`) may take
// them: on a shared server one connection serves everyone, so an agent's token would act for all.
// Names and values are checked (no reserved names, no line breaks, at most 32 per server), and headers
// are refused on a stdio or shared server and on `default` — so `parseRules` takes the servers'
// configs (`ServerRef`: a bare name leaves the kind unknown, and headers for it are an error). The
// gateway reads `Rules.agents.get(id).serverHeaders` when it asks the pool for the agent's connection.

import { tryExpand, type Env } from '../config/expand.js';
import { describeValue, isPlainObject } from '../config/issues.js';
import type { ServerConfig } from '../config/types.js';

/** What the rules need to know of a server `.mcp.json` defines (a bare name: its kind is unknown). */
export type ServerRef = string | Pick<ServerConfig, 'name' | 'type' | 'sessions'>;

export type HeaderSet = Readonly<Record<string, string>>;

interface HeadersContext {
  readonly servers: ReadonlyMap<string, ServerRef>;
  readonly env: Env;
  error(at: readonly PropertyKey[], message: string): void;
  warn(at: readonly PropertyKey[], message: string): void;
}

/** Headers per server an agent may set; past these counts the entry is an error, not a truncation. */
const MAX_SERVER_HEADERS = 32;
const MAX_VALUE_BYTES = 8192;
// RFC 9110 token characters.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// What mcpgate itself sets on every request to a remote server, or what frames the HTTP message.
// A header that carries a credential by its name, or a value shaped like one (a scheme and a token,
// or a long opaque string): written literally rather than as `${VAR}`, it gets a warning at load.
const CREDENTIAL_NAME = /^(proxy-)?authorization$|^cookie$|api[-_]?key|token|secret|password|passwd|auth/i;
const CREDENTIAL_VALUE = /^(Bearer|Basic|Token|Digest)\s+\S{8,}$|^[A-Za-z0-9_\-.~+/=]{24,}$/i;
const RESERVED = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
  'te',
  'upgrade',
  'keep-alive',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);

/** The agent's `serverHeaders`, expanded and validated: server → its headers. */
export function readServerHeaders(id: string, value: unknown, ctx: HeadersContext, isDefault: boolean): ReadonlyMap<string, HeaderSet> {
  const out = new Map<string, HeaderSet>();
  if (value === undefined) return out;
  const base = ['agents', id, 'serverHeaders'];
  if (!isPlainObject(value)) {
    ctx.error(base, `expected an object mapping server names to {"Header-Name": "value"}, got ${describeValue(value)}`);
    return out;
  }
  if (isDefault) {
    ctx.error(
      base,
      'the "default" agent may not hold server credentials: they would be sent for every agent without rules of its own; give each agent its own serverHeaders',
    );
    return out;
  }
  for (const [server, headers] of Object.entries(value)) {
    const at = [...base, server];
    if (!serverTakesHeaders(id, server, at, ctx)) continue;
    const read = readHeaderSet(headers, at, server, ctx);
    if (read !== undefined) out.set(server, read);
  }
  return out;
}

/** False (with an error or warning recorded) when `server` cannot take an agent's headers. */
function serverTakesHeaders(id: string, server: string, at: readonly PropertyKey[], ctx: HeadersContext): boolean {
  const ref = ctx.servers.get(server);
  if (ref === undefined) {
    // As for allow/deny: the other file may be mid-edit.
    ctx.warn(at, `agent ${JSON.stringify(id)} has headers for server ${JSON.stringify(server)}, which .mcp.json does not define`);
    return false;
  }
  if (typeof ref === 'string') {
    ctx.error(at, `server ${JSON.stringify(server)}: its kind is not known here, so its headers cannot be checked`);
    return false;
  }
  if (ref.type === 'stdio') {
    ctx.error(
      at,
      `server ${JSON.stringify(server)} is a stdio server: headers are for remote ("http" or "sse") servers (a stdio server gets its settings from its "env")`,
    );
    return false;
  }
  if (ref.sessions === 'shared') {
    ctx.error(
      at,
      `server ${JSON.stringify(server)} has one session shared by all agents, so an agent's credentials would act for everyone: set "sessions": "per-agent" (or "per-session") on it in .mcp.json`,
    );
    return false;
  }
  return true;
}

function readHeaderSet(value: unknown, at: readonly PropertyKey[], server: string, ctx: HeadersContext): HeaderSet | undefined {
  if (!isPlainObject(value)) {
    ctx.error(at, `expected an object of header names to values, got ${describeValue(value)}`);
    return undefined;
  }
  const names = Object.keys(value);
  if (names.length > MAX_SERVER_HEADERS) {
    ctx.error(at, `${names.length} headers for server ${JSON.stringify(server)}: at most ${MAX_SERVER_HEADERS}`);
    return undefined;
  }
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  let ok = true;
  for (const name of names) {
    const where = [...at, name];
    const raw = value[name];
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) {
      ctx.error(where, "not a valid HTTP header name (letters, digits and !#$%&'*+.^_`|~-)");
      ok = false;
    } else if (RESERVED.has(lower)) {
      ctx.error(where, `${name} is set by mcpgate (or frames the request) and cannot be set per agent`);
      ok = false;
    } else if (seen.has(lower)) {
      ctx.error(where, `header ${name} is listed twice (header names are case-insensitive)`);
      ok = false;
    } else if (typeof raw !== 'string') {
      // The value is not echoed: it may be a credential.
      ctx.error(where, `expected a string (use \${VAR} to take it from mcpgate's environment), got ${typeof raw}`);
      ok = false;
    } else {
      const expanded = tryExpand(raw, ctx.env);
      if (!expanded.ok) {
        ctx.error(where, expanded.reason);
        ok = false;
      } else if (/[\r\n\0]/.test(expanded.value)) {
        ctx.error(where, 'the value (after ${VAR} expansion) holds a line break or NUL, which HTTP does not allow');
        ok = false;
      } else if (Buffer.byteLength(expanded.value) > MAX_VALUE_BYTES) {
        ctx.error(where, `the value (after \${VAR} expansion) is longer than ${MAX_VALUE_BYTES} bytes`);
        ok = false;
      } else {
        out[name] = expanded.value;
        // The value is not echoed here either.
        if (!raw.includes('${') && raw !== '' && (CREDENTIAL_NAME.test(name) || CREDENTIAL_VALUE.test(raw))) {
          ctx.warn(
            where,
            `the value of ${name} looks like a credential written in the rules file itself; prefer "\${VAR}" with the variable set in mcpgate's environment (a rules file is often shared, reviewed or committed)`,
          );
        }
      }
    }
    seen.add(lower);
  }
  return ok ? Object.freeze(out) : undefined;
}
