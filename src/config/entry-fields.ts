// Readers of a server entry's own optional fields: `prefix`, `roots`, `era`, `auth`, `start` with
// `idleStop`, and `inheritEnv`. Each returns the field for the snapshot (set only when the file has it) and reports
// its problems into the context.
// `start` is `"always"` or `"on-demand"`, and on-demand is an error on a per-agent or per-session
// entry; `idleStop` is a positive integer of ms, an error except on an on-demand entry.

import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import type { ConfigIssue, InheritEnv, OAuthSettings, ServerEra, SharingMode, StartMode } from './types.js';
import { describeValue } from './issues.js';
import { EXPECTED, MAX_TIMEOUT_MS, oauthObject, SAFE_NAME } from './mcp-json-schema.js';
import type { Context, Expand, Issue } from './read-context.js';

/** A remote entry's era: the legacy HTTP+SSE transport has no 2026-07-28 form. */
export function readEra(
  name: string,
  type: 'http' | 'sse',
  era: ServerEra | undefined,
  ctx: Context,
  issue: (at: (string | number)[], message: string) => ConfigIssue,
): { era?: ServerEra } {
  if (era === undefined) return {};
  if (type === 'sse' && era !== '2025') {
    ctx.errors.push(
      issue(
        ['era'],
        `expected "2025" for a "type": "sse" server, got "${era}": the legacy HTTP+SSE transport has no 2026-07-28 form (use "type": "http") (server "${name}")`,
      ),
    );
    return {};
  }
  return { era };
}

const MAX_PREFIX_LENGTH = 32;
/** Roots one entry may list, and the length of one URI: what a `roots/list` answer may cost. */
const MAX_ROOTS = 64;
const MAX_ROOT_LENGTH = 4096;

/**
 * `"roots"`: the `file://` URIs a server that asks `roots/list` is answered with when no agent can be
 * asked (or the agent has no roots capability). Set only when the file says so.
 */
export function readRoots(name: string, raw: unknown, expand: Expand, ctx: Context, issue: Issue): { roots?: readonly string[] } {
  if (raw === undefined) return {};
  if (!Array.isArray(raw)) {
    ctx.errors.push(
      issue(
        ['roots'],
        `expected an array of file:// URIs such as ["file:///home/me/project"], got ${describeValue(raw)} (server "${name}")`,
      ),
    );
    return {};
  }
  if (raw.length > MAX_ROOTS) {
    ctx.errors.push(issue(['roots'], `${raw.length} roots: at most ${MAX_ROOTS} (server "${name}")`));
    return {};
  }
  const before = ctx.errors.length;
  const roots: string[] = [];
  raw.forEach((item: unknown, i) => {
    if (typeof item !== 'string')
      return void ctx.errors.push(issue(['roots', i], `expected a file:// URI, got ${describeValue(item)} (server "${name}")`));
    const at = ctx.errors.length;
    const uri = expand(item, ['roots', i]);
    if (ctx.errors.length > at) return;
    const parsed = uri.length <= MAX_ROOT_LENGTH && URL.canParse(uri) ? new URL(uri) : undefined;
    if (parsed === undefined)
      ctx.errors.push(
        issue(
          ['roots', i],
          `expected a file:// URI of at most ${MAX_ROOT_LENGTH} characters, got ${describeValue(uri, true)} (server "${name}")`,
        ),
      );
    else if (parsed.protocol !== 'file:')
      ctx.errors.push(
        issue(['roots', i], `expected a file:// URI (MCP roots are file:// URIs), got a "${parsed.protocol}" URI (server "${name}")`),
      );
    else if (roots.includes(uri)) ctx.warnings.push(issue(['roots', i], `${describeValue(uri, true)} is listed twice (server "${name}")`));
    else roots.push(uri);
  });
  return ctx.errors.length > before ? {} : { roots: Object.freeze(roots) };
}

/** `"prefix"`: a client-safe string (set only when the file says so, so other snapshots are unchanged) or false. */
export function readPrefix(name: string, prefix: string | false | undefined, ctx: Context, issue: Issue): { prefix?: string | false } {
  if (prefix === undefined) return {};
  if (prefix !== false && (!SAFE_NAME.test(prefix) || prefix.length > MAX_PREFIX_LENGTH)) {
    ctx.errors.push(
      issue(
        ['prefix'],
        `expected a prefix of 1 to ${MAX_PREFIX_LENGTH} letters, digits, _ or - (or false for none), got ${describeValue(prefix, true)} (server "${name}")`,
      ),
    );
    return {};
  }
  return { prefix };
}

export function toInheritEnv(value: boolean | string[]): InheritEnv {
  if (value === true) return 'all';
  if (value === false) return 'none';
  return Object.freeze([...value]);
}

/** A remote entry's `auth`: only `oauth`, only over Streamable HTTP, never beside a configured Authorization header. */
export function readAuth(
  name: string,
  type: 'http' | 'sse',
  raw: unknown,
  headers: Record<string, string>,
  expand: Expand,
  ctx: Context,
  issue: Issue,
): { auth?: OAuthSettings } {
  if (raw === undefined) return {};
  const parsed = oauthObject.safeParse(raw === 'oauth' ? { type: 'oauth' } : raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where =
      typeof raw !== 'object' || raw === null
        ? `, got ${describeValue(raw, true)}`
        : first === undefined
          ? ''
          : ` (${first.path.length > 0 ? `at "${first.path.join('.')}": ` : ''}${first.message})`;
    ctx.errors.push(issue(['auth'], `expected ${EXPECTED.auth}${where} (server "${name}")`));
    return {};
  }
  if (type === 'sse') {
    ctx.errors.push(
      issue(['auth'], `OAuth is supported for Streamable HTTP servers only, not the legacy "sse" transport (server "${name}")`),
    );
    return {};
  }
  if (Object.keys(headers).some((key) => key.toLowerCase() === 'authorization')) {
    ctx.errors.push(issue(['auth'], `server "${name}" has both "auth" and an Authorization header; keep one`));
    return {};
  }
  const o = parsed.data;
  const auth: { -readonly [K in keyof OAuthSettings]: OAuthSettings[K] } = { grant: o.grant };
  if (o.clientId !== undefined) auth.clientId = expand(o.clientId, ['auth', 'clientId']);
  if (o.clientSecret !== undefined) auth.clientSecret = expand(o.clientSecret, ['auth', 'clientSecret']);
  if (o.scope !== undefined) auth.scope = o.scope;
  if (o.privateKey !== undefined) auth.privateKey = expand(o.privateKey, ['auth', 'privateKey']);
  if (o.privateKeyFile !== undefined) {
    if (o.privateKey !== undefined)
      ctx.errors.push(issue(['auth', 'privateKeyFile'], `give "privateKey" or "privateKeyFile", not both (server "${name}")`));
    else {
      const read = readKeyFile(resolve(dirname(ctx.file), expand(o.privateKeyFile, ['auth', 'privateKeyFile'])));
      if (typeof read === 'string') auth.privateKey = read;
      else ctx.errors.push(issue(['auth', 'privateKeyFile'], `${read.error} (server "${name}")`));
    }
  }
  if (o.maxScope !== undefined) auth.maxScope = o.maxScope;
  if (o.issuer !== undefined) {
    const url = expand(o.issuer, ['auth', 'issuer']);
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      ctx.errors.push(issue(['auth', 'issuer'], `"issuer" must be the authorization server's issuer URL, got "${url}" (server "${name}")`));
    else auth.issuer = url;
  }
  if (o.signingAlgorithm !== undefined) auth.signingAlgorithm = o.signingAlgorithm;
  if (o.assertionFile !== undefined) auth.assertionFile = expand(o.assertionFile, ['auth', 'assertionFile']);
  if (auth.grant === 'jwt_bearer' && (auth.clientId === undefined || auth.assertionFile === undefined)) {
    ctx.errors.push(
      issue(['auth', 'grant'], `"jwt_bearer" needs "clientId" and "assertionFile" (the file holding the workload's JWT; server "${name}")`),
    );
  }
  if (auth.grant !== 'jwt_bearer' && auth.assertionFile !== undefined)
    ctx.errors.push(issue(['auth', 'assertionFile'], `"assertionFile" is the assertion of the "jwt_bearer" grant (server "${name}")`));
  readIdJag(o, auth, name, ctx, issue, expand);
  if (auth.clientSecret !== undefined && auth.clientId === undefined)
    ctx.errors.push(issue(['auth', 'clientSecret'], `a client secret needs its "clientId" (server "${name}")`));
  if (auth.privateKey !== undefined) {
    if (auth.clientId === undefined)
      ctx.errors.push(issue(['auth', 'privateKey'], `a private key needs its "clientId" (the client it signs in as; server "${name}")`));
    if (auth.clientSecret !== undefined)
      ctx.errors.push(issue(['auth', 'privateKey'], `give "privateKey" (private_key_jwt) or "clientSecret", not both (server "${name}")`));
    if (!/-----BEGIN PRIVATE KEY-----/.test(auth.privateKey))
      ctx.errors.push(
        issue(
          ['auth', 'privateKey'],
          `"privateKey" must be a PEM PKCS #8 private key ("-----BEGIN PRIVATE KEY-----…"), usually written as \${VAR} or read from "privateKeyFile" (server "${name}")`,
        ),
      );
  } else if (o.signingAlgorithm !== undefined) {
    ctx.errors.push(
      issue(['auth', 'signingAlgorithm'], `"signingAlgorithm" is the algorithm of "privateKey", which is missing (server "${name}")`),
    );
  }
  if (
    auth.grant === 'client_credentials' &&
    (auth.clientId === undefined || (auth.clientSecret === undefined && auth.privateKey === undefined))
  ) {
    ctx.errors.push(
      issue(['auth', 'grant'], `"client_credentials" needs "clientId" and "clientSecret" (or "privateKey") (server "${name}")`),
    );
  }
  if (o.clientMetadataUrl !== undefined) {
    const url = expand(o.clientMetadataUrl, ['auth', 'clientMetadataUrl']);
    auth.clientMetadataUrl = url;
    // What the SDK and authorization servers accept as a client id (draft-ietf-oauth-client-id-metadata-document).
    let parsedUrl: URL | null = null;
    try {
      parsedUrl = new URL(url);
    } catch {
      // reported below
    }
    if (
      parsedUrl === null ||
      parsedUrl.protocol !== 'https:' ||
      parsedUrl.pathname === '/' ||
      parsedUrl.hash !== '' ||
      parsedUrl.username !== '' ||
      parsedUrl.password !== ''
    ) {
      ctx.errors.push(
        issue(
          ['auth', 'clientMetadataUrl'],
          `"clientMetadataUrl" must be an https URL with a path (the client id an authorization server fetches the document from), e.g. https://example.com/mcpgate/client.json (server "${name}")`,
        ),
      );
    }
    if (auth.grant !== 'authorization_code')
      ctx.errors.push(
        issue(
          ['auth', 'clientMetadataUrl'],
          `a client ID metadata document names a client that signs in people; "client_credentials" uses "clientId" and "clientSecret" (server "${name}")`,
        ),
      );
  }
  return { auth: Object.freeze(auth) };
}

/**
 * The `id_jag` grant's keys (enterprise-managed authorization): where the IdP exchanges the ID token,
 * who mcpgate is there, and the file holding the person's ID token. Any of them on another grant is
 * refused (it would be ignored).
 */
function readIdJag(
  o: z.infer<typeof oauthObject>,
  auth: { -readonly [K in keyof OAuthSettings]: OAuthSettings[K] },
  name: string,
  ctx: Context,
  issue: Issue,
  expand: Expand,
): void {
  if (o.idpTokenEndpoint !== undefined) auth.idpTokenEndpoint = expand(o.idpTokenEndpoint, ['auth', 'idpTokenEndpoint']);
  if (o.idpClientId !== undefined) auth.idpClientId = expand(o.idpClientId, ['auth', 'idpClientId']);
  if (o.idpClientSecret !== undefined) auth.idpClientSecret = expand(o.idpClientSecret, ['auth', 'idpClientSecret']);
  if (o.idTokenFile !== undefined) auth.idTokenFile = expand(o.idTokenFile, ['auth', 'idTokenFile']);
  const keys = ['idpTokenEndpoint', 'idpClientId', 'idpClientSecret', 'idTokenFile'] as const;
  if (auth.grant !== 'id_jag') {
    for (const key of keys) {
      if (auth[key] !== undefined)
        ctx.errors.push(
          issue(['auth', key], `"${key}" belongs to the "id_jag" grant (enterprise-managed authorization; server "${name}")`),
        );
    }
    return;
  }
  const missing = (['clientId', 'idpTokenEndpoint', 'idpClientId', 'idTokenFile'] as const).filter((key) => auth[key] === undefined);
  if (missing.length > 0) {
    ctx.errors.push(
      issue(
        ['auth', 'grant'],
        `"id_jag" needs "clientId" (at the server's authorization server), "idpTokenEndpoint", "idpClientId" and "idTokenFile" (the file holding the person's ID token); missing ${missing.map((k) => `"${k}"`).join(', ')} (server "${name}")`,
      ),
    );
  }
  const endpoint = auth.idpTokenEndpoint;
  if (endpoint !== undefined) {
    let url: URL | null = null;
    try {
      url = new URL(endpoint);
    } catch {
      // reported below
    }
    if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '') {
      ctx.errors.push(
        issue(
          ['auth', 'idpTokenEndpoint'],
          `"idpTokenEndpoint" must be the IdP's token endpoint, an http(s) URL such as https://idp.example.com/oauth2/token (server "${name}")`,
        ),
      );
    }
  }
}

const START_MODES: readonly StartMode[] = ['always', 'on-demand'];

/**
 * `"start"` (`"always"` or `"on-demand"`) and `"idleStop"` (ms). `idleStop` is only for on-demand
 * entries: an always-started server stopped when idle would become an on-demand one by stealth, so
 * it is an error rather than a setting silently read another way. A per-agent or per-session server
 * already starts its pooled connections on an agent's first call and stops them by `pool.idleMs`.
 * Each is set only when the file says so (snapshots of other entries are unchanged).
 */
export function readStart(
  name: string,
  start: unknown,
  idleStop: unknown,
  sessions: SharingMode,
  ctx: Context,
  issue: Issue,
): { start?: StartMode; idleStop?: number } {
  const out: { start?: StartMode; idleStop?: number } = {};
  if (start !== undefined) {
    if (typeof start === 'string' && (START_MODES as readonly string[]).includes(start)) out.start = start as StartMode;
    else ctx.errors.push(issue(['start'], `expected "always" or "on-demand", got ${describeValue(start, true)} (server "${name}")`));
  }
  if (out.start === 'on-demand' && sessions !== 'shared') {
    ctx.errors.push(
      issue(
        ['start'],
        `"on-demand" is for servers with one shared session; server "${name}" is "${sessions}", whose connections already start on an agent's first call and stop after "pool": {"idleMs"}`,
      ),
    );
  }
  if (idleStop !== undefined) {
    if (typeof idleStop !== 'number' || !Number.isInteger(idleStop) || idleStop < 1 || idleStop > MAX_TIMEOUT_MS) {
      ctx.errors.push(
        issue(
          ['idleStop'],
          `expected a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS}), got ${describeValue(idleStop)} (server "${name}")`,
        ),
      );
    } else if (out.start !== 'on-demand') {
      if (start === undefined || out.start !== undefined)
        ctx.errors.push(
          issue(
            ['idleStop'],
            `"idleStop" applies only to a server with "start": "on-demand" (server "${name}" is started always); add "start": "on-demand" or remove "idleStop"`,
          ),
        );
    } else {
      out.idleStop = idleStop;
    }
  }
  return out;
}

/** A private key file is at most this large (a PEM key is a few KiB). */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/**
 * `privateKeyFile`: the PEM, read as it is (multi-line, which an env file cannot hold). Like ssh, the
 * file must be the running user's and readable by nobody else (mode 0600 or 0400), and a regular file.
 */
function readKeyFile(file: string): string | { error: string } {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const st = fstatSync(fd);
    if (!st.isFile()) return { error: `"privateKeyFile" ${file} is not a regular file` };
    if (typeof process.getuid === 'function' && st.uid !== process.getuid())
      return { error: `"privateKeyFile" ${file} belongs to another user; it must be yours` };
    if ((st.mode & 0o077) !== 0)
      return {
        error: `"privateKeyFile" ${file} is readable or writable by others (mode ${(st.mode & 0o777).toString(8)}); run chmod 600 ${file}`,
      };
    if (st.size > MAX_KEY_FILE_BYTES) return { error: `"privateKeyFile" ${file} is larger than ${MAX_KEY_FILE_BYTES} bytes` };
    return readFileSync(fd, 'utf8').trim();
  } catch (err) {
    return { error: `cannot read "privateKeyFile" ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
