// What the workers of a cluster trust of each other is authenticated with the cluster secret
// (HMAC-SHA256), never taken from Redis or the network on its word: a forwarded request (refused
// when signed more than MAX_SKEW_MS ago or ahead, or replayed: forward-ids.ts) and a record in Redis
// (treated as absent when written by anyone but a worker with the secret, or moved to another key).
// Each MAC names what it is for, so one kind can never pass for another. Pure: no I/O, so
// test/unit/cluster/cluster-signing.test.ts covers it without processes. What each MAC covers: the
// room's README, "What a signature covers".

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Headers a forwarded request carries. */
export const FORWARD_HEADER = 'x-mcpgate-forwarded-by';
export const FORWARD_TS_HEADER = 'x-mcpgate-forwarded-at';
export const FORWARD_SIG_HEADER = 'x-mcpgate-forwarded-sig';
/** Who the forward speaks for: base64url JSON `{agent, identified, claims}` (see `Identity`). */
export const FORWARD_IDENTITY_HEADER = 'x-mcpgate-forwarded-identity';
/** SHA-256 of the body, hex: checked against the body once it has been read. */
export const FORWARD_DIGEST_HEADER = 'x-mcpgate-forwarded-digest';
/** The forward's single-use id (forward-ids.ts). */
export const FORWARD_ID_HEADER = 'x-mcpgate-forward-id';

/** How far a forwarded request's timestamp may be from this worker's clock. */
export const MAX_SKEW_MS = 30_000;

/** The agent a forward speaks for, as the worker that authenticated it found it. */
export interface Identity {
  agent: string;
  identified: boolean;
  /** The verified claims of the agent's token (for the rules' grants), if it had any. */
  claims: Readonly<Record<string, unknown>> | undefined;
}

interface Signed {
  method: string;
  path: string;
  /** The Mcp-Session-Id it names ('' when none). */
  session: string;
  /** The worker id of the sender. */
  from: string;
  /** The worker id of the receiver: another worker refuses it. */
  to: string;
  /** Its single-use id (forward-ids.ts). */
  id: string;
  /** Milliseconds since the epoch, as sent. */
  at: number;
  /** The identity header's value, as sent. */
  identity: string;
  /** The body's digest (`digest(body)`). */
  digest: string;
}

/** The body digest a forward carries. */
export function digest(body: string): string {
  return createHash('sha256').update(body).digest('hex');
}

export function encodeIdentity(who: Identity): string {
  return Buffer.from(
    JSON.stringify({ agent: who.agent, identified: who.identified, ...(who.claims !== undefined && { claims: who.claims }) }),
    'utf8',
  ).toString('base64url');
}

/** The identity in a (verified) header, or undefined when it is not one of ours. */
export function decodeIdentity(header: string): Identity | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const { agent, identified, claims } = (value ?? {}) as { agent?: unknown; identified?: unknown; claims?: unknown };
  if (typeof agent !== 'string' || agent === '' || typeof identified !== 'boolean') return undefined;
  if (claims !== undefined && (claims === null || typeof claims !== 'object' || Array.isArray(claims))) return undefined;
  return { agent, identified, claims: claims as Readonly<Record<string, unknown>> | undefined };
}

function mac(secret: string, s: Signed): Buffer {
  return createHmac('sha256', secret)
    .update(`mcpgate forward\n${s.method}\n${s.path}\n${s.session}\n${s.from}\n${s.to}\n${s.id}\n${s.at}\n${s.identity}\n${s.digest}`)
    .digest();
}

function same(given: string, expected: Buffer): boolean {
  const bytes = Buffer.from(given, 'base64url');
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

/** The signature header's value for `s`. */
export function sign(secret: string, s: Signed): string {
  return mac(secret, s).toString('base64url');
}

/** Why a forwarded request is refused, or undefined when its signature holds. */
export function verify(secret: string, s: Signed, signature: string, now = Date.now()): string | undefined {
  if (!Number.isSafeInteger(s.at) || Math.abs(now - s.at) > MAX_SKEW_MS)
    return "its timestamp is missing or more than 30 s from this worker's clock";
  if (!same(signature, mac(secret, s))) return 'its signature does not match the cluster secret';
  return undefined;
}

/** What a record in Redis is: a worker's, a session's, a call waiting for approval, an admin's decision on one. */
export type RecordKind = 'worker' | 'session' | 'approval' | 'decision';

function recordMac(secret: string, kind: RecordKind, key: string, fields: Readonly<Record<string, string>>): Buffer {
  const entries = Object.entries(fields)
    .filter(([name]) => name !== 'sig')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHmac('sha256', secret)
    .update(`mcpgate ${kind} record\n${key}\n${JSON.stringify(entries)}`)
    .digest();
}

/** The `sig` field of a record with these fields (every field but `sig` is covered) under `key`. */
export function signRecord(secret: string, kind: RecordKind, key: string, fields: Readonly<Record<string, string>>): string {
  return recordMac(secret, kind, key, fields).toString('base64url');
}

/** Whether a record read from Redis under `key` was written by a worker with the secret, unchanged. */
export function verifyRecord(secret: string, kind: RecordKind, key: string, fields: Readonly<Record<string, string>>): boolean {
  const sig = fields.sig;
  return typeof sig === 'string' && same(sig, recordMac(secret, kind, key, fields));
}
