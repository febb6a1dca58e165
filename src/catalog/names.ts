// Namespaced names: `SERVER__TOOL` (separator configurable), always `^[A-Za-z0-9_-]{1,64}$` because
// clients reject anything else. Sanitizing, truncating and de-colliding are deterministic: the same
// catalog always gets the same names, whatever order servers answered in.

import { createHash } from 'node:crypto';

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_NAME_LENGTH = 64;
export const DEFAULT_SEPARATOR = '__';

interface NameRequest {
  server: string;
  name: string;
}

interface NameAssignment {
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
function assignNames(requests: readonly NameRequest[], separator: string = DEFAULT_SEPARATOR): NameAssignment {
  // Names that are already client-safe go first, so a clean `x_y` keeps its name and a sanitized
  // `x.y` that collides with it is the one that gets a suffix; within each group, sorted order.
  // Each request's plain name and cleanliness are worked out once, not in every comparison.
  const sorted = requests.map((r) => candidateOf(r.server, r.name, separator));
  sorted.sort(before);
  const names = new Map<string, string>();
  const taken = new Set<string>();
  const warnings: string[] = [];
  for (const { server, name, plain, candidate: first } of sorted) {
    const key = nameKey(server, name);
    if (names.has(key)) continue;
    let candidate = first;
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

/** One (server, name) pair as `assignNames` sees it: its plain name, cleanliness and first candidate. */
interface Candidate {
  readonly server: string;
  readonly name: string;
  readonly plain: string;
  readonly dirty: 0 | 1;
  /** The public name it gets unless another pair sorted before it wants the same one. */
  readonly candidate: string;
}

function candidateOf(server: string, name: string, separator: string): Candidate {
  // A clean plain name is its own sanitized form (sanitize only changes an empty part).
  const plain = `${server}${separator}${name}`;
  const dirty = isClean(plain) ? 0 : 1;
  const candidate = dirty === 0 && server !== '' && name !== '' ? plain : fit(`${sanitize(server)}${separator}${sanitize(name)}`, plain);
  return { server, name, plain, dirty, candidate };
}

function before(a: Candidate, b: Candidate): number {
  return a.dirty - b.dirty || (a.server === b.server ? cmp(a.name, b.name) : cmp(a.server, b.server));
}

/**
 * `assignNames` kept up to date one server at a time: a list_changed of one server must
 * not rename the whole catalog. Each server's candidates are worked out when its names change; who
 * wants which public name is an index, so only names wanted twice are decided, the way
 * `assignNames` decides them (the pair sorted first keeps it, the others get the hash suffix). In the
 * rare case where a suffixed name is itself someone's candidate, `assignNames` runs over everything:
 * the result is always exactly `assignNames` of all the pairs (test/unit/catalog/catalog-incremental.test.ts).
 */
export class NameBook {
  private readonly servers = new Map<string, Map<string, Candidate>>();
  /** candidate → the pairs that want it (almost always one). */
  private readonly wanted = new Map<string, Candidate[]>();
  /** Candidates wanted by more than one pair. */
  private readonly shared = new Set<string>();
  /** Pairs whose candidate is not their plain name (each gets a warning). */
  private readonly renamed = new Set<Candidate>();

  constructor(private readonly separator: string = DEFAULT_SEPARATOR) {}

  /** Replaces one server's names (none: the server is gone). */
  set(server: string, names: Iterable<string>): void {
    const old = this.servers.get(server);
    if (old !== undefined) for (const c of old.values()) this.drop(c);
    const now = new Map<string, Candidate>();
    for (const name of names) {
      if (now.has(name)) continue;
      const c = candidateOf(server, name, this.separator);
      now.set(name, c);
      const list = this.wanted.get(c.candidate);
      if (list === undefined) this.wanted.set(c.candidate, [c]);
      else {
        list.push(c);
        this.shared.add(c.candidate);
      }
      if (c.candidate !== c.plain) this.renamed.add(c);
    }
    if (now.size === 0) this.servers.delete(server);
    else this.servers.set(server, now);
  }

  private drop(c: Candidate): void {
    const list = this.wanted.get(c.candidate)!;
    const rest = list.filter((other) => other !== c);
    if (rest.length === 0) this.wanted.delete(c.candidate);
    else this.wanted.set(c.candidate, rest);
    if (rest.length <= 1) this.shared.delete(c.candidate);
    this.renamed.delete(c);
  }

  /**
   * The public names that differ from each pair's candidate (`nameKey` → name), and the warnings,
   * as `assignNames` over every pair would give them. Costs the pairs that share a name or were
   * renamed, not the catalog.
   */
  resolve(): { moved: Map<string, string>; warnings: string[] } {
    const moved = new Map<string, string>();
    const noted: { c: Candidate; name: string }[] = [];
    for (const candidate of this.shared) {
      const [keeper, ...others] = [...this.wanted.get(candidate)!].sort(before);
      if (keeper!.candidate !== keeper!.plain) noted.push({ c: keeper!, name: candidate });
      for (const c of others) {
        const name = fit(`${candidate.slice(0, MAX_NAME_LENGTH - 9)}_${shortHash(c.plain)}`, c.plain);
        // A suffixed name that is also some pair's candidate: the order of the whole walk decides.
        if (this.wanted.has(name)) return this.everything();
        moved.set(nameKey(c.server, c.name), name);
        noted.push({ c, name });
      }
    }
    for (const c of this.renamed) if (!this.shared.has(c.candidate)) noted.push({ c, name: c.candidate });
    noted.sort((a, b) => before(a.c, b.c));
    const warnings = noted.map(({ c, name }) =>
      name !== c.candidate
        ? `"${c.name}" of server "${c.server}" collides with another name and is published as "${name}"`
        : `"${c.name}" of server "${c.server}" is published as "${name}" (client-safe name)`,
    );
    return { moved, warnings };
  }

  /** The public name of a server's name, given `moved` from `resolve`. */
  nameOf(server: string, name: string, moved: ReadonlyMap<string, string>): string | undefined {
    const c = this.servers.get(server)?.get(name);
    if (c === undefined) return undefined;
    return moved.size === 0 ? c.candidate : (moved.get(nameKey(server, name)) ?? c.candidate);
  }

  private everything(): { moved: Map<string, string>; warnings: string[] } {
    const requests: NameRequest[] = [];
    for (const names of this.servers.values()) for (const c of names.values()) requests.push({ server: c.server, name: c.name });
    const all = assignNames(requests, this.separator);
    const moved = new Map<string, string>();
    for (const names of this.servers.values()) {
      for (const c of names.values()) {
        const key = nameKey(c.server, c.name);
        const name = all.names.get(key)!;
        if (name !== c.candidate) moved.set(key, name);
      }
    }
    return { moved, warnings: all.warnings };
  }
}

function isClean(name: string): boolean {
  return NAME_PATTERN.test(name);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Resource URIs are namespaced as `mcpgate://SERVER/ORIGINAL-URI`: a valid URI whose remainder is untouched, so templates still expand. */
const URI_SCHEME = 'mcpgate://';

/**
 * Schemes a host recognises a resource by, namespaced inside their own scheme (`ui://SERVER/REST`
 * for `ui://REST`): MCP Apps hosts render only `ui://` resources, so `mcpgate://SERVER/ui://…` would
 * be a resource no host shows; a skill's `skill://PATH/SKILL.md` becomes `skill://SERVER/PATH/SKILL.md`,
 * the server's prefix as the first segment of the skill's path, so its final segment is still the
 * skill's name (the Skills extension's rule). Every other URI keeps the `mcpgate://` form.
 */
const KEPT_SCHEMES: readonly string[] = ['ui://', 'skill://'];

export function namespaceUri(serverKey: string, uri: string): string {
  for (const scheme of KEPT_SCHEMES) if (uri.startsWith(scheme)) return `${scheme}${serverKey}/${uri.slice(scheme.length)}`;
  return `${URI_SCHEME}${serverKey}/${uri}`;
}

/**
 * Splits a namespaced URI into its server key and the server's own URI, or undefined if it is not one
 * of ours. A kept scheme's URI (`ui://KEY/REST`) splits as one, whether or not KEY names a server: the
 * caller decides (an unprefixed server's own `ui://` URI looks the same).
 */
export function splitUri(uri: string): { serverKey: string; uri: string } | undefined {
  for (const scheme of [URI_SCHEME, ...KEPT_SCHEMES]) {
    if (!uri.startsWith(scheme)) continue;
    const slash = uri.indexOf('/', scheme.length);
    if (slash <= scheme.length) return undefined;
    const rest = uri.slice(slash + 1);
    return { serverKey: uri.slice(scheme.length, slash), uri: scheme === URI_SCHEME ? rest : `${scheme}${rest}` };
  }
  return undefined;
}
