// The shared servers' lists in the catalog: a server whose session is ready is listed (pins review,
// catalog, renewed subscriptions), one that restarts stays listed (a restart is no list change),
// one that is lost is withdrawn; a debounced list_changed refreshes what changed; approvals written
// to the pin store release or hold tools again, in the own catalogs too. Also the servers'
// instructions for `initialize`, withheld while they differ from the approved ones. An on-demand
// server is listed from its last known catalog while it rests (pins reviewed as for a live one), and
// what its live session lists is kept as that catalog.

import type { Catalog } from '../catalog/catalog.js';
import type { CatalogLimits } from '../catalog/limits.js';
import { Refresher } from '../catalog/refresher.js';
import { GatewayError } from '../errors.js';
import type { AuditLog } from '../observability/audit.js';
import type { Logger } from '../observability/logger.js';
import type { PinKeeper } from '../pins/keeper.js';
import type { Connection } from '../servers/connection.js';
import { LIST_KINDS, fetchLists, type ListKind, type ServerLists } from '../servers/lists.js';
import type { KnownCatalog, KnownCatalogs } from '../servers/known-catalog.js';
import type { PoolScope } from '../servers/pool.js';
import { MODERN_PROTOCOL_VERSIONS } from '../wire/era.js';
import type { Agents } from './open-agents.js';
import type { OwnCatalogs } from './own-catalogs.js';
import type { AgentSession } from './session.js';
import type { Subscriptions } from './subscriptions.js';

/** What the listing reads and changes (the Gateway makes each of these). */
export interface CatalogListingParts {
  readonly connections: ReadonlyMap<string, Connection>;
  readonly catalog: Catalog;
  readonly limits: CatalogLimits;
  readonly pins: PinKeeper;
  /** On-demand servers' last known catalogs (the state directory's `catalogs/`). */
  readonly known: KnownCatalogs;
  readonly agents: Agents;
  readonly subscriptions: Subscriptions<AgentSession>;
  /** The own catalogs, reviewed again with the catalog when approvals change. */
  readonly own: OwnCatalogs;
  readonly log: Logger;
  readonly audit: AuditLog | undefined;
  /** The separator of public tool names, for the instructions' preamble. */
  readonly separator: string;
  isClosing(): boolean;
  /** The sessions that own a pool scope's connections. */
  ownersOf(scope: PoolScope): Set<AgentSession>;
}

export class CatalogListing {
  private readonly refresher: Refresher;
  /** Servers whose instructions changed since they were approved: not passed to agents. */
  private readonly heldInstructions = new Set<string>();

  constructor(private readonly parts: CatalogListingParts) {
    this.refresher = new Refresher((server, kinds) => this.refresh(server, kinds), parts.log);
  }

  /** A shared server's list_changed: a debounced refresh of that list. */
  requestRefresh(server: string, kind: ListKind): void {
    this.refresher.request(server, kind);
  }

  /**
   * A session is ready (first start or reconnect): list everything (a list its 2026-07-28 server
   * called fresh for longer is reused), review pins, publish.
   */
  async ready(conn: Connection): Promise<void> {
    const { lists, trims } = await fetchLists(conn, LIST_KINDS, { reuse: true });
    this.parts.limits.record(conn.name, LIST_KINDS, trims);
    const review = await this.parts.pins.check(conn.name, lists.tools ?? [], conn.info?.instructions);
    if (conn.state !== 'ready')
      throw (
        conn.lastError ??
        new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${conn.name}" went away while being listed`, { server: conn.name })
      );
    const changed = this.parts.catalog.set(conn.name, lists, review.held);
    this.keep(conn, lists);
    this.holdInstructions(conn.name, review.instructionsHeld !== undefined);
    // Also during start-up: an agent that listed before this server was ready hears of it now.
    this.parts.agents.announce(changed);
    this.parts.subscriptions.renew(conn);
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
   * The server's session was lost and its connection restarts it (backoff): what the agents asked
   * of that session ends, but the server stays listed: a restart is no list change, and
   * a call meanwhile gets the connection's retryable MCPG_SERVER_UNAVAILABLE. Its pins' record
   * stays too; the restarted server's lists are reviewed again when it is ready.
   */
  interrupted(conn: Connection): void {
    this.refresher.forget(conn.name);
    for (const session of this.parts.agents) session.connectionLost(conn);
  }

  /** The server is not served any more (parked, closed): withdraw it and tell the agents. */
  lost(conn: Connection): void {
    this.refresher.forget(conn.name);
    this.parts.pins.forget(conn.name);
    for (const session of this.parts.agents) session.connectionLost(conn);
    this.parts.agents.announce(this.parts.catalog.remove(conn.name));
  }

  /** One server's instructions when agents may see them (ready, not withheld by pins). */
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

  private async refresh(server: string, kinds: ListKind[]): Promise<void> {
    const conn = this.parts.connections.get(server);
    if (conn?.state !== 'ready') return;
    const { lists, trims } = await fetchLists(conn, kinds);
    if (conn.state !== 'ready') return;
    this.parts.limits.record(server, kinds, trims);
    const review = lists.tools === undefined ? undefined : await this.parts.pins.check(server, lists.tools, conn.info?.instructions);
    if (conn.state !== 'ready') return;
    const changed = this.parts.catalog.set(server, lists, review?.held);
    this.keep(conn, lists);
    if (changed.length > 0) this.parts.log.info('catalog refreshed', { server, changed });
    this.parts.agents.announce(changed);
  }

  /** Approvals changed on disk: review every server's current tools again; release or hold as they say. */
  async reviewAll(): Promise<void> {
    // An idle on-demand server's listed tools too (its last known catalog).
    const listed = (conn: Connection): boolean => conn.state === 'ready' || (conn.state === 'idle' && this.parts.catalog.lists(conn.name));
    for (const conn of this.parts.connections.values()) {
      if (!listed(conn)) continue;
      const review = await this.parts.pins.check(
        conn.name,
        this.parts.catalog.serverTools(conn.name),
        conn.state === 'idle' ? this.parts.known.instructionsOf(conn.name) : conn.info?.instructions,
      );
      if (!listed(conn) || this.parts.isClosing()) continue;
      this.holdInstructions(conn.name, review.instructionsHeld !== undefined);
      const before = this.parts.catalog.heldTools(conn.name);
      if (this.parts.catalog.setHeld(conn.name, review.held)) {
        this.auditReleased(conn.name, before, review.held);
        this.parts.log.info('pins changed: catalog updated', { server: conn.name, held: review.held.size });
        this.parts.agents.announce(['tools']);
      }
    }
    // The own catalogs' tools too: an approval releases a tool first seen on a pooled connection.
    for (const { scope, catalog } of [...this.parts.own.entries()]) {
      for (const server of catalog.listedServers()) {
        const review = await this.parts.pins.check(server, catalog.serverTools(server), undefined, scope.key);
        if (this.parts.isClosing()) return;
        if (this.parts.own.get(scope) !== catalog || !catalog.lists(server)) continue;
        const before = catalog.heldTools(server);
        if (catalog.setHeld(server, review.held)) {
          this.auditReleased(server, before, review.held);
          this.parts.agents.announce(['tools'], this.parts.ownersOf(scope));
        }
      }
    }
  }

  /** The audit trail's `released` lines: tools held before this review and approved now. */
  private auditReleased(server: string, before: ReadonlyMap<string, unknown>, after: ReadonlyMap<string, unknown>): void {
    const audit = this.parts.audit;
    if (audit === undefined) return;
    for (const tool of before.keys()) {
      const pin = after.has(tool) ? undefined : this.parts.pins.pinOf(server, tool);
      if (pin !== undefined) audit.record({ event: 'released', server, tool, digest: pin.digest, by: pin.by });
    }
  }

  private holdInstructions(server: string, held: boolean): void {
    if (held) this.heldInstructions.add(server);
    else this.heldInstructions.delete(server);
  }

  /** Shutdown: no refresh starts any more. */
  close(): void {
    this.refresher.close();
  }
}
