// Name owners: per kind, which servers' items want each public name, and the server that owns it —
// the earliest in .mcp.json of those that want it (the others have that item withheld: layout.ts). Kept up
// to date one server at a time, so a rebuild lays out again only the servers whose owners changed.

export type NameKind = 'tool' | 'prompt' | 'resource' | 'template';
const NAME_KINDS: readonly NameKind[] = ['tool', 'prompt', 'resource', 'template'];

/** The public name each of one server's items wants, per kind, in the server's order (repeats included). */
export type WantedNames = Record<NameKind, string[]>;

function emptyClaims(): Record<NameKind, Map<string, Map<string, number>>> {
  return { tool: new Map(), prompt: new Map(), resource: new Map(), template: new Map() };
}

export class NameOwners {
  /** Per kind, each public name → the servers whose items want it (and how many items): the earliest keeps it. */
  private claimants: Record<NameKind, Map<string, Map<string, number>>> = emptyClaims();

  /** `byOrder`: servers in .mcp.json order (then by name). */
  constructor(private readonly byOrder: (a: string, b: string) => number) {}

  /** Forgets every claim (every server is laid out again). */
  clear(): void {
    this.claimants = emptyClaims();
  }

  /**
   * Replaces the claims of each server in `dirty` — its last layout's (in `layouts`) by `now`'s
   * (undefined: the server is gone) — and adds to `dirty` the servers a change of owner affects;
   * `listed`: the servers the catalog holds a part of.
   */
  reclaim(
    dirty: Set<string>,
    now: ReadonlyMap<string, WantedNames | undefined>,
    layouts: ReadonlyMap<string, { readonly claims: WantedNames }>,
    listed: ReadonlyMap<string, unknown>,
  ): void {
    const ownersBefore = new Map<string, string | undefined>();
    for (const server of dirty) {
      const claims = now.get(server);
      const old = layouts.get(server)?.claims;
      for (const kind of NAME_KINDS) {
        for (const name of [...(old?.[kind] ?? []), ...(claims?.[kind] ?? [])]) {
          const at = `${kind}\u0000${name}`;
          if (!ownersBefore.has(at)) ownersBefore.set(at, this.ownerOf(kind, name));
        }
        for (const name of old?.[kind] ?? []) this.unclaim(kind, name, server);
        for (const name of claims?.[kind] ?? []) this.claim(kind, name, server);
      }
    }
    for (const [at, before] of ownersBefore) {
      const [kind, name] = at.split('\u0000') as [NameKind, string];
      const after = this.ownerOf(kind, name);
      if (after === before) continue;
      // The old owner shows the item no more; every claimant's warning names the new owner.
      if (before !== undefined && listed.has(before)) dirty.add(before);
      for (const server of this.claimants[kind].get(name)?.keys() ?? []) dirty.add(server);
    }
  }

  private claim(kind: NameKind, name: string, server: string): void {
    let servers = this.claimants[kind].get(name);
    if (servers === undefined) this.claimants[kind].set(name, (servers = new Map<string, number>()));
    servers.set(server, (servers.get(server) ?? 0) + 1);
  }

  private unclaim(kind: NameKind, name: string, server: string): void {
    const servers = this.claimants[kind].get(name);
    const count = servers?.get(server);
    if (servers === undefined || count === undefined) return;
    if (count > 1) servers.set(server, count - 1);
    else servers.delete(server);
    if (servers.size === 0) this.claimants[kind].delete(name);
  }

  /** The server that keeps a public name: the earliest in .mcp.json of those whose items want it. */
  ownerOf(kind: NameKind, name: string): string | undefined {
    const servers = this.claimants[kind].get(name);
    if (servers === undefined) return undefined;
    let owner: string | undefined;
    for (const server of servers.keys()) if (owner === undefined || this.byOrder(server, owner) < 0) owner = server;
    return owner;
  }
}
