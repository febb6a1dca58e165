// Authenticating a request one worker forwards to another (issue #12): an HMAC-SHA256, keyed with
// the cluster secret, over what the request does (method, path, session), who sent it, when, and a
// digest of its body. A client of the Redis or of a worker's port that lacks the secret cannot
// pass a request off as forwarded; one signed more than MAX_SKEW_MS ago (or ahead) is refused.
// Pure: no I/O, so test/unit/cluster-signing.test.ts covers it without processes.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Headers a forwarded request carries. */
export const FORWARD_HEADER = 'x-mcpgate-forwarded-by';
export const FORWARD_TS_HEADER = 'x-mcpgate-forwarded-at';
export const FORWARD_SIG_HEADER = 'x-mcpgate-forwarded-sig';

/** How far a forwarded request's timestamp may be from this worker's clock. */
export const MAX_SKEW_MS = 30_000;

export interface Signed {
  method: string;
  path: string;
  session: string;
  /** The worker id of the sender. */
  from: string;
  /** Milliseconds since the epoch, as sent. */
  at: number;
  body: string;
}

function mac(secret: string, s: Signed): Buffer {
  const digest = createHash('sha256').update(s.body).digest('hex');
  return createHmac('sha256', secret).update(`${s.method}\n${s.path}\n${s.session}\n${s.from}\n${s.at}\n${digest}`).digest();
}

/** The signature header's value for `s`. */
export function sign(secret: string, s: Signed): string {
  return mac(secret, s).toString('base64url');
}

/** Why a forwarded request is refused, or undefined when its signature holds. */
export function verify(secret: string, s: Signed, signature: string, now = Date.now()): string | undefined {
  if (!Number.isSafeInteger(s.at) || Math.abs(now - s.at) > MAX_SKEW_MS) return 'its timestamp is missing or more than 30 s from this worker\'s clock';
  const expected = mac(secret, s);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'its signature does not match the cluster secret';
  return undefined;
}
