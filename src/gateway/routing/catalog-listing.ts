// Every connection's lists in the catalog they go to, parameterised by scope (`ListingScope`): a
// shared server's in the shared catalog every agent sees, a pooled connection's (a per-agent or
// per-session server's) in its pool scope's own catalog (own-catalogs.ts), seen by its owners only.
// One path for both: a connection that is ready is listed (pins review, catalog, announced to the
// audience of the scope); its debounced list_changed (one `Refresher`, keyed by server and scope)
// refreshes what changed; approvals written to the pin store release or hold tools again in every
// catalog; a connection that goes is withdrawn. What differs by scope branches here, as
// src/gateway/README.md, "Listing", says.

import type { Catalog, HeldInfo } from '../../catalog/catalog.js';
import type { SkillShelf } from '../../catalog/skill-shelf.js';
import type { SizeCaps } from '../../catalog/size-caps.js';
import { Refresher } from '../../catalog/refresher.js';
import { GatewayError } from '../../errors.js';
import type { AuditLog } from '../../observability/audit.js';
import type { Logger } from '../../observability/logger.js';
import type { PinKeeper } from '../../pins/keeper.js';
import type { Review } from '../../pins/review.js';
import { isSkillPin, skillPinOf } from '../../pins/skill-pins.js';
import type { Connection, ConnectionHooks } from '../../servers/connection.js';
import { LIST_KINDS, fetchLists, type ListKind, type ServerLists } from '../../servers/lists.js';
import type { KnownCatalog, KnownCatalogs } from '../../servers/known-catalog.js';
import { isOwner, scopeOf, type ConnectionPool, type PoolScope } from '../../servers/pool.js';
import { MODERN_PROTOCOL_VERSIONS } from '../../wire/era.js';
import { LIST_CHANGED, MCP_LOG_LEVELS } from './method-tables.js';
import type { Agents } from '../open-agents.js';
import type { OwnCatalogs } from './own-catalogs.js';
import type { ServerEvents } from './server-events.js';
import type { AgentSession } from '../session/session.js';
import type { Subscriptions } from '../session/subscriptions.js';
import { fetchSkills } from './skill-listing.js';
import type { SkillEntry } from '../../wire/skills.js';

/** The shared catalog as a scope; its `key` is the pins' source of a server's own connection. */
export const SHARED_SCOPE = { kind: 'shared', key: '' } as const;

/** Where a connection's lists go: the shared catalog, or one pool scope's own catalog. */
type ListingScope = typeof SHARED_SCOPE | PoolScope;

/**
 * The key of one scope's view of one server (the refresher's and `pooled`'): a shared server's is its
 * name (what a failed refresh is logged under), a pool scope's `server\0scope`.
 */
function keyOf(server: string, scope: ListingScope): string {
  return scope.kind === 'shared' ? server : `${server}\u0000${scope.key}`;
}

/** Why a shared server's first listing failed: its connection's last error, or that it went away. */
function wentAway(conn: Connection): GatewayError {
  return (
    conn.lastError ??
    new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${conn.name}" went away while being listed`, { server: conn.name })
  );
}

/** What the listing reads and changes (the Gateway makes each of these). */
interface CatalogListingParts {
  readonly connections: ReadonlyMap<string, Connection>;
  readonly catalog: Catalog;
  /** Every shared server's skills (the Skills extension), reviewed with its tools. */
  readonly skills: SkillShelf;
  readonly own: OwnCatalogs;
  readonly pool: ConnectionPool;
  readonly limits: SizeCaps;
  readonly pins: PinKeeper;
  /** On-demand servers' last known catalogs (the state directory's `catalogs/`). */
  readonly known: KnownCatalogs;
  readonly agents: Agents;
  readonly subscriptions: Subscriptions<AgentSession>;
  readonly serverEvents: ServerEvents;
  readonly log: Logger;
  readonly audit: AuditLog | undefined;
  /** The separator of public tool names, for the instructions' preamble. */
  readonly separator: string;
  isClosing(): boolean;
}

/** One server's part of one catalog, for a review of every part; `conn`: a shared server's connection. */
interface ListedPart {
  readonly scope: ListingScope;
  readonly server: string;
  readonly catalog: Catalog;
  readonly conn?: Connection;
  /** Whether the part is still listed (checked again after the review's wait). */
  readonly listed: () => boolean;
}

export class CatalogListing {
  /** Debounced refreshes on list_changed, keyed by server and scope (`keyOf`). */
  private readonly refresher: Refresher;
  /** What each pending refresh is of, by the same key. */
  private readonly refreshing = new Map<string, { readonly server: string; readonly scope: ListingScope }>();
  /** The pooled connection each own catalog's part was listed from, by the same key. */
  private readonly pooled = new Map<string, Connection>();
  /** Shared servers whose instructions changed since they were approved: not passed to agents. */
  private readonly heldInstructions = new Set<string>();

  constructor(private readonly parts: CatalogListingParts) {
    this.refresher = new Refresher((key, kinds) => this.refresh(key, kinds), parts.log);
  }

  /**
   * What a connection listed in `scope` tells the gateway. A list_changed is a debounced refresh of
   * that list in that scope; anything else goes to the scope's audience (server-events.ts): every
   * agent for a shared server, its owners for a pooled connection, none for a per-agent or
   * per-session server's catalog connection (it lists the server and nothing more).
   */
  hooks(scope: ListingScope): ConnectionHooks {
    const owners = (conn: Connection): ReadonlySet<AgentSession> | undefined =>
      scope.kind !== 'shared' ? this.ownersOf(scope) : conn.config.sessions === 'shared' ? undefined : new Set();
    return {
      notification: (conn, msg) => {
        const kinds = LIST_CHANGED[msg.method];
        if (kinds !== undefined) for (const kind of kinds) this.requestRefresh(conn, scope, kind);
        else this.parts.serverEvents.notification(conn, msg, scope.kind === 'shared' ? undefined : this.ownersOf(scope));
      },
      serverRequest: (conn, msg, related) => this.parts.serverEvents.serverRequest(conn, msg, related, owners(conn)),
      ready: (conn) => this.ready(conn, scope),
      interrupted: (conn) => this.interrupted(conn, scope),
      lost: (conn, reason) => this.lost(conn, scope, reason !== undefined),
    };
  }

  /** The sessions a pool scope's connections belong to. */
  ownersOf(scope: PoolScope): Set<AgentSession> {
    const owners = new Set<AgentSession>();
    for (const session of this.parts.agents) if (isOwner(session, scope)) owners.add(session);
    return owners;
  }

  /** Who is told of a change in `scope`'s catalog: every agent (undefined), or the scope's owners. */
  private audience(scope: ListingScope): Set<AgentSession> | undefined {
    return scope.kind === 'shared' ? undefined : this.ownersOf(scope);
  }

  /**
   * A connection in `scope` is ready (first start, a shared server's reconnect, a new pooled
   * connection): list everything and publish. A pooled connection also gets its owners' log level
   * before it serves them.
   */
  async ready(conn: Connection, scope: ListingScope): Promise<void> {
    if (scope.kind === 'shared') return this.list(conn, scope, LIST_KINDS, true);
    this.pooled.set(keyOf(conn.name, scope), conn);
    await Promise.all([this.list(conn, scope, LIST_KINDS, true), this.setPooledLogLevel(conn, this.ownersOf(scope))]);
  }

  /** A list_changed: a debounced refresh of that list in that scope, if the connection is the one listed there. */
  requestRefresh(conn: Connection, scope: ListingScope, kind: ListKind): void {
    if (!this.isListed(conn, scope)) return;
    const key = keyOf(conn.name, scope);
    this.refreshing.set(key, { server: conn.name, scope });
    this.refresher.request(key, kind);
  }

  private async refresh(key: string, kinds: ListKind[]): Promise<void> {
    const what = this.refreshing.get(key);
    if (what === undefined) return;
    const { server, scope } = what;
    const conn = scope.kind === 'shared' ? this.parts.connections.get(server) : this.pooled.get(key);
    // A pooled connection the pool let go of is refreshed no more (it is being closed).
    if (conn?.state !== 'ready' || (scope.kind !== 'shared' && this.parts.pool.entryOf(conn) === undefined)) return;
    await this.list(conn, scope, kinds, false);
  }

  /**
   * Whether `conn` is the connection `scope` lists its server from: a shared server's part is its
   * name's (a reload's new connection lists it again); a pool scope's is the connection that last
   * listed it there.
   */
  private isListed(conn: Connection, scope: ListingScope): boolean {
    return scope.kind === 'shared' || this.pooled.get(keyOf(conn.name, scope)) === conn;
  }

  /**
   * Lists `kinds` of a connection (all when it becomes ready, `first`, the changed ones on its
   * list_changed), reviews its tools against the pins (a shared server's instructions with them,
   * on `first`), puts them in the scope's catalog and tells the audience what changed.
   */
  private async list(conn: Connection, scope: ListingScope, kinds: readonly ListKind[], first: boolean): Promise<void> {
    const shared = scope.kind === 'shared';
    // A 2026-07-28 shared server's lists its discovery called fresh are reused on (re)connect.
    const { lists, trims } = await fetchLists(conn, kinds, { reuse: first && shared });
    // Gone meanwhile: a shared server's first listing fails its start; anything else just stops.
    const gone = (): boolean => {
      if (conn.state === 'ready' && this.isListed(conn, scope)) return false;
      if (first && shared) throw wentAway(conn);
      return true;
    };
    if (gone()) return;
    if (shared) this.parts.limits.record(conn.name, kinds, trims);
    // A shared server's skills are listed with its resources (a resources list_changed lists them again).
    const skills = shared && (first || kinds.includes('resources')) ? await this.listSkills(conn) : undefined;
    if (gone()) return;
    const instructions = shared ? conn.info?.instructions : undefined;
    // A shared server's skills are reviewed with its tools, so one review records all it holds.
    const skillEntries = shared ? (skills?.entries ?? this.parts.skills.entriesOf(conn.name)) : [];
    const review =
      lists.tools === undefined && !(first && shared) && skills === undefined
        ? undefined
        : await this.parts.pins.check(
            conn.name,
            [...(lists.tools ?? (shared ? this.parts.catalog.serverTools(conn.name) : [])), ...skillEntries.map(skillPinOf)],
            instructions,
            scope.key,
          );
    if (gone()) return;
    const held = splitHeld(review);
    const changed = shared
      ? this.parts.catalog.set(conn.name, lists, held?.tools)
      : this.parts.own.set(scope, conn.name, lists, held?.tools);
    if (shared) {
      this.keep(conn, lists);
      if (first) this.holdInstructions(conn.name, review?.instructionsHeld !== undefined);
      const skillsChanged =
        skills !== undefined
          ? this.parts.skills.set(conn.name, skills.entries, held?.skills ?? new Set(), skills.cache)
          : held !== undefined && this.parts.skills.setHeld(conn.name, held.skills);
      if (skillsChanged && !changed.includes('resources')) this.parts.agents.announceSkills();
    }
    if (changed.length > 0)
      this.parts.log[first ? 'debug' : 'info'](first ? 'catalog listed' : 'catalog refreshed', {
        server: conn.name,
        ...(!shared && { scope: scope.key }),
        changed,
      });
    // Also during start-up: an agent that listed before this server was ready hears of it now.
    this.parts.agents.announce(changed, this.audience(scope));
    if (shared && first) this.parts.subscriptions.renew(conn);
  }

  /** A shared server's skills, if it declares the extension; a listing that fails keeps the last one (logged). */
  private async listSkills(
    conn: Connection,
  ): Promise<{ entries: SkillEntry[]; cache: { ttlMs?: number; cacheScope?: string } } | undefined> {
    try {
      return await fetchSkills(conn, this.parts.log);
    } catch (err) {
      this.parts.log.warn('skills/list failed: the last skills listed are kept', { server: conn.name, error: err });
      return undefined;
    }
  }

  /** A server's skills listed again now (a read found bytes that differ from the approved ones). */
  async relistSkills(server: string): Promise<void> {
    const conn = this.parts.connections.get(server);
    if (conn?.state !== 'ready') return;
    await this.list(conn, SHARED_SCOPE, ['resources'], false);
  }

  /**
   * An on-demand server not running: listed from its last known catalog, its tools reviewed against
   * the pins as a live server's are (a held tool stays held); reviewed again when it starts.
   */
  async listKnown(conn: Connection, known: KnownCatalog): Promise<void> {
    const review = await this.parts.pins.check(conn.name, known.lists.tools, known.instructions);
    if (conn.state !== 'idle' || this.parts.connections.get(conn.name) !== conn) return;
    const changed = this.parts.catalog.set(conn.name, known.lists, review.held);
    this.holdInstructions(conn.name, review.instructionsHeld !== undefined);
    this.parts.agents.announce(changed);
  }

  /** What an on-demand server's live session listed becomes its last known catalog. */
  private keep(conn: Connection, lists: Partial<ServerLists>): void {
    if (!conn.onDemand) return;
    this.parts.known.record(conn.name, lists, conn.info?.instructions, MODERN_PROTOCOL_VERSIONS.includes(conn.info?.protocolVersion ?? ''));
  }

  /**
   * The connection's session was lost. A shared server's connection restarts it (backoff): what
   * the agents asked of that session ends, but the server stays listed: a restart is no list
   * change, and a call meanwhile gets the connection's retryable MCPG_SERVER_UNAVAILABLE. Its pins'
   * record stays too; the restarted server's lists are reviewed again when it is ready. A pooled
   * connection's state is gone with its session: it is not restarted in place but withdrawn and
   * reaped, and the next call makes a fresh one. Its owners meanwhile see the shared view of the
   * server (the catalog connection's lists, kept through its own restarts): the same tools unless
   * their own lists differed, so a crash is no list change for them either.
   */
  interrupted(conn: Connection, scope: ListingScope): void {
    if (scope.kind !== 'shared') return this.lost(conn, scope, true);
    this.refresher.forget(keyOf(conn.name, scope));
    for (const session of this.parts.agents) session.connectionLost(conn);
  }

  /**
   * The connection is not served any more (parked, closed, a pooled one evicted or dead): withdraw
   * what it listed and tell the audience. A pooled connection that died (`reap`) leaves the pool.
   */
  lost(conn: Connection, scope: ListingScope, reap = false): void {
    const listed = this.isListed(conn, scope);
    if (listed) {
      const key = keyOf(conn.name, scope);
      this.pooled.delete(key);
      this.refresher.forget(key);
      this.refreshing.delete(key);
      this.parts.pins.forget(conn.name, scope.key);
    }
    if (scope.kind !== 'shared') this.parts.subscriptions.forget(conn);
    for (const session of this.parts.agents) session.connectionLost(conn);
    if (listed) {
      const removed = scope.kind === 'shared' ? this.parts.catalog.remove(conn.name) : this.parts.own.remove(scope, conn.name);
      if (scope.kind === 'shared' && this.parts.skills.remove(conn.name) && !removed.includes('resources'))
        this.parts.agents.announceSkills();
      this.parts.agents.announce(removed, this.audience(scope));
    }
    if (scope.kind !== 'shared' && reap) this.parts.pool.reap(conn);
  }

  /** One shared server's instructions when agents may see them (ready, not withheld by pins). */
  serverInstructions(server: string): string | undefined {
    const conn = this.parts.connections.get(server);
    const text = conn?.info?.instructions;
    return conn?.state === 'ready' && text !== undefined && text.trim() !== '' && !this.heldInstructions.has(server) ? text : undefined;
  }

  /** The ready servers' own instructions (a resting on-demand server's last known), each under its server's name, for `initialize`. */
  instructions(): string | undefined {
    const parts: string[] = [];
    for (const conn of this.parts.connections.values()) {
      const text = conn.state === 'idle' ? this.parts.known.instructionsOf(conn.name) : conn.info?.instructions;
      if (
        (conn.state === 'ready' || conn.state === 'idle') &&
        text !== undefined &&
        text.trim() !== '' &&
        !this.heldInstructions.has(conn.name)
      )
        parts.push(`## ${conn.name}\n${text.trim()}`);
    }
    if (parts.length === 0) return undefined;
    return `mcpgate fronts several MCP servers; their tools are named SERVER${this.parts.separator}TOOL. Instructions from each server:\n\n${parts.join('\n\n')}`;
  }

  /**
   * Every server part listed now, in the shared catalog (an idle on-demand server's too: its last
   * known catalog) and in each own catalog (an approval releases a tool first seen on a pooled
   * connection), with whether it is still listed after a wait.
   */
  private *listedParts(): Iterable<ListedPart> {
    const { catalog, own } = this.parts;
    for (const conn of [...this.parts.connections.values()]) {
      const listed = (): boolean => conn.state === 'ready' || (conn.state === 'idle' && catalog.lists(conn.name));
      if (listed()) yield { scope: SHARED_SCOPE, server: conn.name, catalog, conn, listed };
    }
    for (const { scope, catalog: ownCatalog } of [...own.entries()])
      for (const server of ownCatalog.listedServers())
        yield { scope, server, catalog: ownCatalog, listed: () => own.get(scope) === ownCatalog && ownCatalog.lists(server) };
  }

  /** Approvals changed on disk: review every listed part's current tools again; release or hold as they say. */
  async reviewAll(): Promise<void> {
    for (const { scope, server, catalog, conn, listed } of this.listedParts()) {
      const shared = scope.kind === 'shared';
      // A shared server's instructions are reviewed with its tools (an idle one's last known).
      const instructions =
        conn === undefined ? undefined : conn.state === 'idle' ? this.parts.known.instructionsOf(server) : conn.info?.instructions;
      const skills = shared ? this.parts.skills.entriesOf(server).map(skillPinOf) : [];
      const review = await this.parts.pins.check(server, [...catalog.serverTools(server), ...skills], instructions, scope.key);
      if (this.parts.isClosing()) return;
      if (!listed()) continue;
      if (shared) this.holdInstructions(server, review.instructionsHeld !== undefined);
      const held = splitHeld(review)!;
      const before = catalog.heldTools(server);
      if (catalog.setHeld(server, held.tools)) {
        this.auditReleased(server, before.keys(), held.tools);
        this.parts.log.info('pins changed: catalog updated', { server, ...(!shared && { scope: scope.key }), held: held.tools.size });
        this.parts.agents.announce(['tools'], this.audience(scope));
      }
      const skillsBefore = this.parts.skills.heldOf(server);
      if (shared && this.parts.skills.setHeld(server, held.skills)) {
        this.auditReleased(server, skillsBefore, held.skills);
        this.parts.log.info('pins changed: skills updated', { server, held: held.skills.size });
        this.parts.agents.announceSkills();
      }
    }
  }

  /** The audit trail's `released` lines: tools held before this review and approved now. */
  private auditReleased(server: string, before: Iterable<string>, after: { has(name: string): boolean }): void {
    const audit = this.parts.audit;
    if (audit === undefined) return;
    for (const tool of before) {
      const pin = after.has(tool) ? undefined : this.parts.pins.pinOf(server, tool);
      if (pin !== undefined) audit.record({ event: 'released', server, tool, digest: pin.digest, by: pin.by });
    }
  }

  private holdInstructions(server: string, held: boolean): void {
    if (held) this.heldInstructions.add(server);
    else this.heldInstructions.delete(server);
  }

  /** The pooled connections `session` owns get their owners' level (the most verbose any of them asked). */
  async setOwnLogLevel(session: AgentSession): Promise<void> {
    const mine = this.parts.pool.list().filter((e) => e.started && e.scope.key === scopeOf(session, e.conn.config.sessions).key);
    await Promise.allSettled(mine.map((e) => this.setPooledLogLevel(e.conn, this.ownersOf(e.scope))));
  }

  private async setPooledLogLevel(conn: Connection, owners: ReadonlySet<AgentSession>): Promise<void> {
    let rank: number | undefined;
    for (const session of owners) if (session.declared.logRank !== undefined) rank = Math.min(rank ?? Infinity, session.declared.logRank);
    const level = rank === undefined ? undefined : MCP_LOG_LEVELS[rank];
    if (level === undefined || conn.state !== 'ready' || conn.info?.capabilities.logging === undefined) return;
    await conn
      .request('logging/setLevel', { level })
      .catch((err: unknown) => this.parts.log.debug('a pooled connection refused logging/setLevel', { server: conn.name, error: err }));
  }

  /** Shutdown: no refresh starts any more. */
  close(): void {
    this.refresher.close();
    this.refreshing.clear();
  }

  /** Shutdown, once every connection is closed. */
  clear(): void {
    this.pooled.clear();
  }
}

/** A review's held names split in two: the server's tools (for the catalog) and its skills (for the skill shelf). */
function splitHeld(review: Review | undefined): { tools: Map<string, HeldInfo>; skills: Set<string> } | undefined {
  if (review === undefined) return undefined;
  const tools = new Map<string, HeldInfo>();
  const skills = new Set<string>();
  for (const [name, info] of review.held) {
    if (isSkillPin(name)) skills.add(name);
    else tools.set(name, info);
  }
  return { tools, skills };
}
