// The modes of one agent session and the choice among them: each mode's session part is made once
// when the session opens, and the one that answers is picked per request from the agent's mode now
// (its rules', else the gateway's: a reload may change it). A session on a curated view is in
// aggregate mode (its lists are the view's) unless it is in code mode; aggregate and search mode get
// code mode's tools beside them where the agent's rules say `"codeMode": true`. The session asks
// `current` and never branches on a mode's name.

import type { Catalog } from '../../catalog/catalog.js';
import type { ProgramRunner } from '../../code/program.js';
import type { AuditLog } from '../../observability/audit.js';
import type { AgentMode } from '../../rules/agent-mode.js';
import type { RequestId } from '../../wire/jsonrpc.js';
import { AggregateMode } from './aggregate-mode.js';
import { CodeBeside } from './code-beside.js';
import type { CodeBoard } from './code-board.js';
import { CodeMode, CodeTools } from './code-mode.js';
import { DiscoveryMode } from './discovery-mode.js';
import type { DiscoveryParts } from './discovery.js';
import { SearchSession } from './search-session.js';
import type { ModeHost, SessionMode } from './session-mode.js';
import type { ToolSearch } from './tool-search.js';

/** What the modes need of the gateway (the session's parts). */
interface ModeParts {
  readonly search: ToolSearch;
  readonly discovery: DiscoveryParts;
  readonly catalog: Catalog;
  readonly codeBoard: CodeBoard;
  readonly codeRunner: ProgramRunner;
  readonly audit: AuditLog | undefined;
}

export class SessionModes {
  private readonly modes: Readonly<Record<AgentMode, SessionMode>>;
  private readonly code: CodeMode;
  /** Aggregate and search mode with code mode's tools beside them. */
  private readonly beside: Readonly<Record<'aggregate' | 'search', SessionMode>>;

  /**
   * @param host what every mode reads of the session and asks of it
   * @param ordinaryTools the agent's ordinary tools list (its view of the catalog), for code mode's tools beside it
   */
  constructor(
    private readonly parts: ModeParts,
    private readonly host: ModeHost,
    ordinaryTools: () => readonly Buffer[],
  ) {
    const codeTools = new CodeTools(
      { search: parts.search, catalog: parts.catalog, board: parts.codeBoard, runner: parts.codeRunner, audit: parts.audit },
      host,
    );
    const aggregate = new AggregateMode(host);
    const search = new SearchSession(parts.search, parts.catalog, host);
    this.code = new CodeMode(codeTools, host);
    this.modes = { aggregate, discovery: new DiscoveryMode(parts.discovery, host), search, code: this.code };
    this.beside = {
      aggregate: new CodeBeside(aggregate, codeTools, ordinaryTools),
      search: new CodeBeside(search, codeTools, ordinaryTools),
    };
  }

  /** The agent's mode now; on a curated view (`view` named) aggregate, unless the agent is in code mode. */
  name(view: string | undefined): AgentMode {
    const mode = this.parts.search.modeOf(this.host.agent);
    return view !== undefined && mode !== 'code' ? 'aggregate' : mode;
  }

  /** The mode that answers now (with code mode's tools beside it where the rules say `codeMode`). */
  current(view: string | undefined): SessionMode {
    const mode = this.name(view);
    if ((mode === 'aggregate' || mode === 'search') && this.parts.search.modeSettingsOf(this.host.agent)?.codeMode === true)
      return this.beside[mode];
    return this.modes[mode];
  }

  /** The agent cancelled request `id`: true when it was a code-mode run (stopped with its inner calls). */
  cancelRun(id: RequestId): boolean {
    return this.code.cancel(id);
  }

  /** The session ends: its code-mode runs stop. */
  close(): void {
    this.code.close();
  }
}
