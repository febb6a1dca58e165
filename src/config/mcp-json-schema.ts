// The `.mcp.json` server entry as zod schemas (a stdio entry, a remote one, the OAuth object), what
// each field should be worded for a person, and zod's issues reworded against the value in the file.
// An entry of the top-level `interceptors` section (interceptor servers) has the same shape.

import { z } from 'zod';
import { DEFAULT_TIMEOUT_MS } from './types.js';
import { describeValue, isPlainObject } from './issues.js';
import type { Context, Issue } from './read-context.js';

// setTimeout fires immediately (with only a warning) for delays past 2^31-1 ms.
export const MAX_TIMEOUT_MS = 2_147_483_647;
// What the catalog can use verbatim in `SERVER__TOOL` names (docs/architecture.md "Names").
export const SAFE_NAME = /^[A-Za-z0-9_-]+$/;
export const TYPES = new Map<string, 'stdio' | 'http' | 'sse'>([
  ['stdio', 'stdio'],
  ['http', 'http'],
  ['sse', 'sse'],
  // Spellings other clients write for Streamable HTTP.
  ['streamable-http', 'http'],
  ['streamableHttp', 'http'],
]);

const common = {
  disabled: z.boolean().default(false),
  timeout: z.number().int().positive().max(MAX_TIMEOUT_MS).default(DEFAULT_TIMEOUT_MS),
  sessions: z.enum(['shared', 'per-agent', 'per-session']).default('shared'),
  // Checked by readLimits (field by field, with the defaults from the top-level "limits").
  limits: z.unknown().optional(),
  // Checked by readPool (field by field); only for the pooled scopes.
  pool: z.unknown().optional(),
  // A string is checked against SAFE_NAME in readPrefix, so its error can say why.
  prefix: z.union([z.string(), z.literal(false)]).optional(),
  era: z.enum(['2025', '2026-07-28', 'auto', 'both']).optional(),
  // Checked by readRoots (each a file:// URI, bounded).
  roots: z.unknown().optional(),
  // Checked by readStart (with idleStop: their errors name the allowed values and how they combine).
  start: z.unknown().optional(),
  idleStop: z.unknown().optional(),
  // Where `mcpgate add` took the entry from (read by `mcpgate outdated`; the gateway does not use it).
  registry: z.looseObject({ name: z.string().min(1), version: z.string().min(1), url: z.string().optional() }).optional(),
};
// `inheritEnv`: true (everything but mcpgate's secrets), false (nothing), or names (`PREFIX_*` allowed).
export const inheritEnvField = z.union([z.boolean(), z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/))]);
export const stdioEntry = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  inheritEnv: inheritEnvField.optional(),
  // Checked by readSandbox (over the file's default; config/sandbox-fields.ts).
  sandbox: z.unknown().optional(),
  ...common,
});
// `"auth": "oauth"`, or the object form with the client's settings (checked by readAuth).
export const oauthObject = z.strictObject({
  type: z.literal('oauth'),
  grant: z.enum(['authorization_code', 'client_credentials', 'jwt_bearer', 'id_jag']).default('authorization_code'),
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  clientMetadataUrl: z.string().min(1).optional(),
  scope: z.string().min(1).optional(),
  privateKey: z.string().min(1).optional(),
  privateKeyFile: z.string().min(1).optional(),
  maxScope: z.string().min(1).optional(),
  issuer: z.string().min(1).optional(),
  assertionFile: z.string().min(1).optional(),
  idpTokenEndpoint: z.string().min(1).optional(),
  idpClientId: z.string().min(1).optional(),
  idpClientSecret: z.string().min(1).optional(),
  idTokenFile: z.string().min(1).optional(),
  signingAlgorithm: z.enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']).optional(),
});
export const remoteEntry = z.looseObject({
  type: z.string().optional(),
  url: z.string(),
  headers: z.record(z.string(), z.string()).default({}),
  auth: z.unknown().optional(),
  ...common,
});

// What each field should be, worded for a person; `[]` is an element, `{}` a value of a map.
export const EXPECTED: Readonly<Record<string, string>> = {
  command: 'a non-empty string',
  args: 'an array of strings',
  'args[]': 'a string',
  env: 'an object whose values are strings',
  'env{}': 'a string',
  cwd: 'a string (a directory)',
  inheritEnv: 'true, false, or an array of variable names (NAME or PREFIX_*)',
  'inheritEnv[]': 'a variable name (letters, digits, _; a trailing * matches a prefix)',
  url: 'a string (an http or https URL)',
  headers: 'an object whose values are strings',
  'headers{}': 'a string',
  disabled: 'true or false',
  timeout: `a positive integer number of milliseconds (at most ${MAX_TIMEOUT_MS})`,
  sessions: '"shared", "per-agent" or "per-session"',
  prefix: "a prefix (letters, digits, _ and -) or false (no prefix: the server's own names)",
  era: '"2025", "2026-07-28", "auto" or "both"',
  registry: 'an object {"name", "version", "url"} (where `mcpgate add` took the server from)',
  'registry{}': 'a non-empty string',
  auth: '"oauth" or {"type": "oauth", "grant", "clientId", "clientSecret", "clientMetadataUrl", "scope", "privateKey", "privateKeyFile", "signingAlgorithm", "maxScope", "issuer", "assertionFile", "idpTokenEndpoint", "idpClientId", "idpClientSecret", "idTokenFile"}',
};

/** zod's issues, reworded as "expected X, got Y" against the value actually in the file. */
export function reportZodIssues(issues: readonly z.core.$ZodIssue[], entry: Record<string, unknown>, ctx: Context, issue: Issue): void {
  const seen = new Set<string>();
  for (const zi of issues) {
    const [field, inner] = zi.path;
    const key = String(field) + (zi.path.length > 1 ? (typeof inner === 'number' ? '[]' : '{}') : '');
    const at = issue(zi.path, '').path;
    if (seen.has(at)) continue;
    seen.add(at);
    let actual: unknown = entry;
    for (const segment of zi.path) {
      actual = isPlainObject(actual) || Array.isArray(actual) ? (actual as Record<PropertyKey, unknown>)[segment] : undefined;
    }
    const expected = EXPECTED[key];
    let message = zi.message; // only for a field EXPECTED lacks, which would be a bug here
    if (expected !== undefined) {
      message =
        actual === undefined ? `missing; expected ${expected}` : `expected ${expected}, got ${describeValue(actual, key === 'sessions')}`;
    }
    ctx.errors.push(issue(zi.path, message));
  }
}
