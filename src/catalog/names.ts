// Namespaced names: `SERVER__TOOL` (separator configurable), always `^[A-Za-z0-9_-]{1,64}$` because
// clients reject anything else. Sanitizing, truncating and de-colliding are deterministic: the same
// catalog always gets the same names, whatever order servers answered in.

import { createHash } from 'node:crypto';

export const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_NAME_LENGTH = 64;
export const DEFAULT_SEPARATOR = '__';

export interface NameRequest {
  server: string;
  name: string;
}

export interface NameAssignment {
  /** `server\u0000name` → public name. */
  names: Map<string, string>;
  /** Human-readable notes about names that had to be changed beyond the plain prefix. */
  warnings: string[];
}

export function nameKey(server: string, name: string): string {
  return `${server}\u0000${name}`;
}

/** Replaces every character a client would reject with `_`. */
export function sanitize(text: string): string {
  const clean = text.replace(/[^A-Za-z0-9_-]/g, '_');
  return clean.length > 0 ? clean : '_';
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** Fits `name` into 64 characters, keeping its start and a hash of the whole so distinct names stay distinct. */
function fit(name: string, full: string): string {
  if (name.length <= MAX_NAME_LENGTH) return name;
  return `${name.slice(0, MAX_NAME_LENGTH - 9)}_${shortHash(full)}`;
}

/**
 * Assigns public names to every (server, name) pair. When two pairs want the same public name, one
 * whose plain `SERVER__NAME` was already valid keeps it; otherwise the one that sorts first does. The
 * other gets a hash suffix.
 */
export function assignNames(requests: readonly NameRequest[], separator: string = DEFAULT_SEPARATOR): NameAssignment {
  // Names that are already client-safe go first, so a clean `x_y` keeps its name and a sanitized
  // `x.y` that collides with it is the one that gets a suffix; within each group, sorted order.
  // Each request's plain name and cleanliness are worked out once, not in every comparison.
  const sorted = requests.map((r) => {
    const plain = `${r.server}${separator}${r.name}`;
    return { server: r.server, name: r.name, plain, dirty: isClean(plain) ? 0 : 1 };
  });
  sorted.sort((a, b) => a.dirty - b.dirty || (a.server === b.server ? cmp(a.name, b.name) : cmp(a.server, b.server)));
  const names = new Map<string, string>();
  const taken = new Set<string>();
  const warnings: string[] = [];
  for (const { server, name, plain, dirty } of sorted) {
    const key = nameKey(server, name);
    if (names.has(key)) continue;
    // A clean plain name is its own sanitized form (sanitize only changes an empty part).
    let candidate = dirty === 0 && server !== '' && name !== '' ? plain : fit(`${sanitize(server)}${separator}${sanitize(name)}`, plain);
    if (taken.has(candidate)) {
      candidate = fit(`${candidate.slice(0, MAX_NAME_LENGTH - 9)}_${shortHash(plain)}`, plain);
      warnings.push(`"${name}" of server "${server}" collides with another name and is published as "${candidate}"`);
    } else if (candidate !== plain) {
      warnings.push(`"${name}" of server "${server}" is published as "${candidate}" (client-safe name)`);
    }
    taken.add(candidate);
    names.set(key, candidate);
  }
  return { names, warnings };
}

function isClean(name: string): boolean {
  return NAME_PATTERN.test(name);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Resource URIs are namespaced as `mcpgate://SERVER/ORIGINAL-URI`: a valid URI whose remainder is untouched, so templates still expand. */
export const URI_SCHEME = 'mcpgate://';

export function namespaceUri(serverKey: string, uri: string): string {
  return `${URI_SCHEME}${serverKey}/${uri}`;
}

/** Splits a namespaced URI into its server key and the server's own URI, or undefined if it is not one of ours. */
export function splitUri(uri: string): { serverKey: string; uri: string } | undefined {
  if (!uri.startsWith(URI_SCHEME)) return undefined;
  const slash = uri.indexOf('/', URI_SCHEME.length);
  if (slash <= URI_SCHEME.length) return undefined;
  return { serverKey: uri.slice(URI_SCHEME.length, slash), uri: uri.slice(slash + 1) };
}
