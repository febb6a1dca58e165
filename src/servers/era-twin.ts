// A dual-era server's second session: a server found modern that pairs eras (`pairsEras`: a remote
// `"auto"` one, or `"both"`) and also accepts `initialize` keeps this 2025 session beside its modern
// one, because such a server serves each era its own way (a tool that asks mid-call works only in
// 2025, an input-required one only in 2026-07-28). A 2025-era agent's requests go here (`routes`)
// unless they name a tool or prompt only the modern era lists; `resources/subscribe`,
// `resources/unsubscribe` and `logging/setLevel` go here too. The connection owns the pairing
// (`EraPairing`); the design, and why a stdio server is not paired by default, is in
// docs/architecture.md ("A link per era").

import type { JsonRpcErrorObject } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { RequestId } from '../wire/jsonrpc.js';
import type { SessionEra } from './modern-protocol.js';
import type { ServerInfo, SessionState } from './session-types.js';

/** What the twin needs of its session (the connection's SessionLike). */
interface TwinSession {
  readonly state: SessionState;
  readonly info: ServerInfo | undefined;
  request(method: string, params?: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/** Pages of a list read to learn the twin's names (a list longer than this routes its tail to the modern session). */
const MAX_PAGES = 20;

class EraTwin<Session extends TwinSession = TwinSession> {
  private tools = new Set<string>();
  private prompts = new Set<string>();

  constructor(readonly session: Session) {}

  /** Learns which tools and prompts the 2025 session shows (again after its list_changed). */
  async learn(): Promise<void> {
    const names = async (method: string, key: string): Promise<Set<string>> => {
      const found = new Set<string>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await this.session.request(method, cursor === undefined ? {} : { cursor });
        const items = result[key];
        if (Array.isArray(items))
          for (const item of items) if (typeof (item as { name?: unknown }).name === 'string') found.add((item as { name: string }).name);
        cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
        if (cursor === undefined) break;
      }
      return found;
    };
    const caps = this.session.info?.capabilities ?? {};
    if (caps.tools !== undefined) this.tools = await names('tools/list', 'tools');
    if (caps.prompts !== undefined) this.prompts = await names('prompts/list', 'prompts');
  }

  /** Whether a 2025-era agent's request goes to this session (else to the modern one). */
  routes(msg: { readonly method: string; readonly params?: Record<string, unknown> | undefined }): boolean {
    if (this.session.state !== 'ready') return false;
    const name = msg.params?.name;
    if (msg.method === 'tools/call') return typeof name === 'string' && this.tools.has(name);
    if (msg.method === 'prompts/get') return typeof name === 'string' && this.prompts.has(name);
    return true;
  }

  /** Whether the 2025 session can subscribe to resources (a modern server may not offer it). */
  get subscribes(): boolean {
    return (this.session.info?.capabilities.resources as { subscribe?: unknown } | undefined)?.subscribe === true;
  }
}

/** The 2025 session's own methods, which the 2026-07-28 revision removed: a dual-era server's twin takes them. */
const SESSION_METHODS: ReadonlySet<string> = new Set(['resources/subscribe', 'resources/unsubscribe', 'logging/setLevel']);

/** What the pairing does with a session (the connection's SessionLike). */
interface PairedSession extends TwinSession {
  readonly era?: SessionEra;
  start(): Promise<void>;
  respond(id: RequestId, result: unknown): void;
  respondError(id: RequestId, error: JsonRpcErrorObject): void;
  close(): Promise<void>;
}

/**
 * One connection's pairing of a dual-era server's two sessions: whether the server is dual (found
 * once, kept across reconnects), its twin while paired, and which of the twin's questions to agents
 * are unanswered. The connection reads `twin` on a call (one field) and asks the rest here.
 */
export class EraPairing<Session extends PairedSession> {
  /** The 2025 session beside the modern one, while paired. */
  twin: EraTwin<Session> | undefined;
  /** Whether an "auto" server found modern also accepts initialize: undefined until tried. */
  private dual: boolean | undefined;
  /** The ids of the twin's requests to an agent not answered yet: their answers go to the twin. */
  private readonly asked = new Set<RequestId>();

  constructor(
    private readonly server: string,
    private readonly log: Logger,
  ) {}

  /**
   * An "auto" server found modern (`primary`) is asked whether it also takes initialize (once: the
   * answer is kept across reconnects). If it does, it serves both eras, each its own way, and keeps
   * `makeTwin()`'s 2025 session beside the modern one. A server known to be dual that now refuses
   * fails the pairing (it throws): it would no longer serve its 2025-era agents fully.
   */
  async pair(primary: Session, makeTwin: () => Session): Promise<void> {
    if (primary.era !== 'modern' || this.dual === false) return;
    const twin = new EraTwin(makeTwin());
    this.twin = twin;
    try {
      await twin.session.start();
      await twin.learn();
      if (this.twin !== twin) return;
      if (this.dual === undefined)
        this.log.info(
          `server "${this.server}" speaks both eras: 2025-era agents are served on a 2025 session of their own, 2026-07-28 agents on the modern one`,
        );
      this.dual = true;
    } catch (err) {
      if (this.twin === twin) this.twin = undefined;
      void twin.session.close();
      if (this.dual === true) throw err;
      this.dual = false;
      this.log.debug(`server "${this.server}" speaks only 2026-07-28 (initialize was refused)`, {
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** Whether `session` is the twin now. */
  isTwin(session: Session): boolean {
    return this.twin?.session === session;
  }

  /** Ends the pairing of this session (lost, stopped, closed): the twin, returned for its caller to stop. */
  unpair(): Session | undefined {
    const twin = this.twin;
    this.twin = undefined;
    this.asked.clear();
    return twin?.session;
  }

  /** The twin's list changed: learn again which tools and prompts it shows. */
  relearn(): void {
    void this.twin
      ?.learn()
      .catch((err: unknown) =>
        this.log.warn('could not list the 2025 session of a dual-era server again', { server: this.server, error: err }),
      );
  }

  /** The twin asked an agent `id`: its answer goes back to the twin. */
  ask(id: RequestId): void {
    this.asked.add(id);
  }

  /** The session an agent's answer to `id` goes to: the twin if it asked, else none (the primary's). */
  answerer(id: RequestId): Session | undefined {
    return this.asked.delete(id) ? this.twin?.session : undefined;
  }

  /** The session a gateway request of `method` goes to when it is the twin's (the 2025 session's own methods). */
  requestTarget(method: string): Session | undefined {
    const twin = this.twin;
    if (twin === undefined || !SESSION_METHODS.has(method)) return undefined;
    return method === 'logging/setLevel' || twin.subscribes ? twin.session : undefined;
  }

  /** The server's info as agents see it: a twin that subscribes makes the server subscribe. */
  info(info: ServerInfo | undefined): ServerInfo | undefined {
    if (info === undefined || this.twin?.subscribes !== true) return info;
    // Subscriptions go to the twin (request), so the server can subscribe though its modern side cannot.
    const resources = info.capabilities.resources;
    return {
      ...info,
      capabilities: {
        ...info.capabilities,
        resources: { ...(typeof resources === 'object' && resources !== null ? resources : {}), subscribe: true },
      },
    };
  }
}
