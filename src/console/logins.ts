// Who is signed in to the console: an admin named in the rules file (`admins`) signs in with a token
// `mcpgate token NAME` made (its hash listed under `admins`) and gets a login cookie. The cookie is
// the login itself, signed with the key every process of this state directory shares (login-key.ts),
// so a login is valid on every worker and no process keeps logins in memory; every state-changing
// request carries the login's CSRF token. A login ends IDLE_MS (30 minutes) after its last request or
// ABSOLUTE_MS (8 hours) after sign-in; sign-out puts its id on the shared deny-list (signed-out.ts).
// What the cookie carries and its attributes: the room's README, "The login cookie".

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { hashToken } from '../auth/auth.js';
import type { Rules } from '../rules/load.js';
import type { SignedOut } from './signed-out.js';

export interface Login {
  readonly id: string;
  readonly admin: string;
  readonly csrf: string;
  /** The hash of the token the admin signed in with: revoking it in the rules ends the login. */
  readonly tokenHash: string;
  readonly since: number;
  readonly seen: number;
  /** A renewed cookie value to send back (the login was last renewed a while ago), if any. */
  readonly renewed: string | undefined;
}

/** The cookie's name; `__Host-` before it over https (RFC 6265bis §4.1.3.2: Secure, Path=/, no Domain). */
export const LOGIN_COOKIE = 'mcpgate_console';
const IDLE_MS = 30 * 60_000;
const ABSOLUTE_MS = 8 * 60 * 60_000;
/** A cookie used after this long since its last renewal is renewed. */
const RENEW_MS = 60_000;
const MAX_TOKEN_CHARS = 8192;
const MAX_COOKIE_CHARS = 4096;

interface Payload {
  i: string;
  a: string;
  h: string;
  s: number;
  t: number;
}

export class Logins {
  constructor(
    private readonly key: () => Buffer,
    private readonly signedOut: SignedOut,
    private readonly now: () => number = Date.now,
  ) {}

  /** Signs in with a token: the new login and its cookie value, or undefined when the token is no admin's. */
  signIn(rules: Rules, token: string): { login: Login; cookie: string } | undefined {
    if (token === '' || token.length > MAX_TOKEN_CHARS) return undefined;
    const tokenHash = hashToken(token);
    const admin = rules.admins.get(tokenHash);
    if (admin === undefined) return undefined;
    const now = this.now();
    const payload: Payload = { i: randomBytes(16).toString('base64url'), a: admin, h: this.mac(`token\0${tokenHash}`), s: now, t: now };
    return { login: this.loginOf(payload, tokenHash, undefined), cookie: this.seal(payload) };
  }

  /** The login a request's cookie carries, if its signature holds and it is still valid under `rules`. */
  find(rules: Rules, cookieHeader: string | undefined, name: string): Login | undefined {
    const value = cookieValue(cookieHeader, name);
    if (value === undefined || value.length > MAX_COOKIE_CHARS) return undefined;
    const payload = this.open(value);
    if (payload === undefined) return undefined;
    const now = this.now();
    if (now - payload.t > IDLE_MS || now - payload.s > ABSOLUTE_MS || payload.t > now + RENEW_MS) return undefined;
    let tokenHash: string | undefined;
    for (const [hash, admin] of rules.admins) if (admin === payload.a && this.mac(`token\0${hash}`) === payload.h) tokenHash = hash;
    if (tokenHash === undefined || this.signedOut.has(payload.i)) return undefined;
    if (now - payload.t < RENEW_MS) return this.loginOf(payload, tokenHash, undefined);
    const renewed = { ...payload, t: now };
    return this.loginOf(renewed, tokenHash, this.seal(renewed));
  }

  /** Ends `login` on every process of this state directory. */
  signOut(login: Login): void {
    this.signedOut.add(login.id, login.since + ABSOLUTE_MS);
  }

  private loginOf(p: Payload, tokenHash: string, renewed: string | undefined): Login {
    return { id: p.i, admin: p.a, csrf: this.mac(`csrf\0${p.i}`), tokenHash, since: p.s, seen: p.t, renewed };
  }

  private seal(payload: Payload): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.mac(`login\0${body}`)}`;
  }

  private open(value: string): Payload | undefined {
    const dot = value.indexOf('.');
    if (dot <= 0) return undefined;
    const body = value.slice(0, dot);
    const sent = Buffer.from(value.slice(dot + 1));
    const expected = Buffer.from(this.mac(`login\0${body}`));
    if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) return undefined;
    try {
      const p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<Payload>;
      if (
        typeof p.i !== 'string' ||
        typeof p.a !== 'string' ||
        typeof p.h !== 'string' ||
        typeof p.s !== 'number' ||
        typeof p.t !== 'number'
      )
        return undefined;
      return { i: p.i, a: p.a, h: p.h, s: p.s, t: p.t };
    } catch {
      return undefined;
    }
  }

  private mac(text: string): string {
    return createHmac('sha256', this.key()).update(text).digest('base64url');
  }
}

/** Whether `sent` is the login's CSRF token (constant time). */
export function csrfMatches(login: Login, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(login.csrf);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** One cookie's value from a Cookie header (RFC 6265 §5.4: `name=value; name2=value2`). */
function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
