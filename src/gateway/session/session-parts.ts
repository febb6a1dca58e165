// What an agent session uses of the gateway: the parts (the router, the rules in force, views,
// settling, the catalog and the own catalogs, connections, subscriptions, metrics, audit, tracing,
// the modes' parts, the call gate, the limits, a few callbacks), never the gateway itself. The
// gateway makes one `SessionParts` and gives it to every session it opens.

import type { Catalog } from '../../catalog/catalog.js';
import type { AuditLog } from '../../observability/audit.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import type { Tracing } from '../../observability/tracing.js';
import type { CallGate } from '../../policy/call-gate.js';
import type { RulesInForce } from '../../rules/load.js';
import type { Connection } from '../../servers/connection.js';
import type { DiscoveryParts } from '../modes/discovery.js';
import type { ToolSearch } from '../modes/tool-search.js';
import type { CodeBoard } from '../modes/code-board.js';
import type { DirectoryReader } from '../modes/capability-directory.js';
import type { ProgramRunner } from '../../code/program.js';
import type { OwnCatalogs } from '../routing/own-catalogs.js';
import type { Router } from '../routing/router.js';
import type { SkillMethods } from '../routing/skill-methods.js';
import type { TaskTable } from '../routing/tasks.js';
import type { AgentViews } from './agent-views.js';
import type { Subscriptions } from './subscriptions.js';
import type { Settling } from './until-settled.js';

/** What a session uses of the gateway: the parts, never the gateway itself. */
/** `Session`: the agent session (session.ts `AgentSession`), named by the gateway that makes the parts. */
export interface SessionParts<Session> {
  router: Router;
  /** The Skills extension's methods (skills/list, skills/get, a skill file's read, directory reads). */
  skills: SkillMethods;
  /** The rules in force (one snapshot; a session on a curated view finds its view there, a call what the gate asks). */
  inForce: RulesInForce;
  views: AgentViews;
  settling: Settling;
  catalog: Catalog;
  connections: ReadonlyMap<string, Connection>;
  subscriptions: Subscriptions<Session>;
  metrics: GatewayMetrics;
  /** The audit trail (--audit); undefined: off, and nothing is built for it. */
  audit: AuditLog | undefined;
  /** OpenTelemetry traces (--otlp-endpoint); undefined: off, and no span is made. */
  tracing: Tracing | undefined;
  /** Discovery mode's meta-tools (for the agents in discovery mode: the gateway's, or their rules'). */
  discovery: DiscoveryParts;
  /** Each agent's mode, and search mode's search_tools and list. */
  search: ToolSearch;
  /** Code mode's runs, for status and metrics (code-board.ts). */
  codeBoard: CodeBoard;
  /** The gateway's pool of sandbox workers for code mode's runs. */
  codeRunner: ProgramRunner;
  /** What the rules hold some calls to before they go (policy/call-gate.ts). */
  gate: CallGate;
  /** Requests one agent may have in flight on servers at once. */
  maxInflight: number;
  /** Neutralize escape sequences and invisible characters in what servers say. */
  sanitize: boolean;
  /** The ready servers' own instructions, and the capability directory when it is on for the reader, for `initialize`. */
  instructions(reader: DirectoryReader): string | undefined;
  /** What mcpgate declares to agents (`method-tables.ts` `gatewayCapabilities`). */
  capabilities(): Record<string, unknown>;
  /** The tasks agents' calls created on servers, and whose each is (tasks.ts). */
  tasks: TaskTable;
  /** Sets the shared servers' log level to the most verbose any agent asked for, and `session`'s own pooled connections to their owners'. */
  setServersLogLevel(session: Session): Promise<void>;
  /** The session ended (the registry forgets it, its subscriptions are dropped). */
  closed(session: Session): void;
  /** The agent's roots changed: tell the servers that may ask it (shared ones and its own pooled ones). */
  rootsChanged(session: Session): void;
  /** An agent that has roots is ready: the shared servers mcpgate answered `roots/list` for ask again. */
  rootsArrived(session: Session): void;
  /**
   * Each pool scope's own catalog: what its per-agent or per-session servers' pooled connections list,
   * shown and routed instead of the shared catalog's part of those servers (own-catalogs.ts).
   */
  own: OwnCatalogs;
}
