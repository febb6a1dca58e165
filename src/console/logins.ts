// Who is signed in to the console: an admin named in the rules file (`admins`) signs in with their
// token; the console keeps a random login id (the HttpOnly, SameSite=Strict cookie) and a CSRF token
// that every state-changing request must carry. Bounded: at most MAX_LOGINS at once (the oldest
// goes), each ends after IDLE_MS without a request or ABSOLUTE_MS after sign-in. A login outlives a
// reload only while its admin (by name and token hash) is still in the rules.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hashToken } from '../auth/auth.js';
import type { Rules } from '../rules/load.js';

export interface Login {
  readonly id: string;
  readonly admin: string;
  readonly csrf: string;
  /** The hash of the token the admin signed in with: revoking it in the rules ends the login. */
  readonly tokenHash: string;
  readonly since: number;
  seen: number;
}

export const LOGIN_COOKIE = 'mcpgate_console';
const MAX_LOGINS = 64;
const IDLE_MS = 30 * 60_000;
const ABSOLUTE_MS = 8 * 60 * 60_000;
const MAX_TOKEN_CHARS = 8192;

export class Logins {
  private readonly logins = new Map<string, Login>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Signs in with a token: the new login, or undefined when the token is no admin's. */
  signIn(rules: Rules, token: string): Login | undefined {
    if (token === '' || token.length > MAX_TOKEN_CHARS) return undefined;
    const tokenHash = hashToken(token);
    const admin = rules.admins.get(tokenHash);
    if (admin === undefined) return undefined;
    if (this.logins.size >= MAX_LOGINS) this.logins.delete(this.logins.keys().next().value!);
    const now = this.now();
    const login: Login = { id: randomBytes(32).toString('base64url'), admin, csrf: randomBytes(32).toString('base64url'), tokenHash, since: now, seen: now };
    this.logins.set(login.id, login);
    return login;
  }

  /** The login a request's cookie names, if it is still valid under `rules`. */
  find(rules: Rules, cookieHeader: string | undefined): Login | undefined {
    const id = cookieValue(cookieHeader, LOGIN_COOKIE);
    if (id === undefined) return undefined;
    const login = this.logins.get(id);
    if (login === undefined) return undefined;
    const now = this.now();
    if (now - login.seen > IDLE_MS || now - login.since > ABSOLUTE_MS || rules.admins.get(login.tokenHash) !== login.admin) {
      this.logins.delete(id);
      return undefined;
    }
    login.seen = now;
    return login;
  }

  signOut(login: Login): void {
    this.logins.delete(login.id);
  }

  get size(): number {
    return this.logins.size;
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
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
