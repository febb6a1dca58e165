// A dual-era server's second session: an `"era": "auto"` server that answered `server/discover` and
// also accepts `initialize` serves each era its own way — a tool written the usual way (a sampling,
// elicitation or roots request in the middle of the call) works only in a 2025 session, a tool that
// answers with an input-required result only in a 2026-07-28 one, and a 2025 server's
// `resources/subscribe` has no modern counterpart on some servers. So the connection keeps this 2025
// session beside its modern one and sends a 2025-era agent's requests here (`routes`), except those
// naming a tool or prompt only the modern era shows: the agent then gets the modern session, with
// input-required results turned into ordinary requests to it. The connection owns the twin: it starts
// it after the modern session, and a twin lost is the connection's session lost.
// The server is asked `initialize` once per connection, and the answer is kept across reconnects; the
// connection pairs the two sessions (`Connection.pairUp`) and chooses by the agent's era (`forward`'s
// `agentEra`). `resources/subscribe`, `resources/unsubscribe` and `logging/setLevel` go to the twin
// too. The two sessions share ids, so a `cancel` goes to both; an answer to a server's question goes
// to the session that asked (`twinAsked`). Servers that behave so: every Python SDK 2.x server, and the
// conformance suite's reference server.

import type { ServerInfo, SessionState } from './session-types.js';

/** What the twin needs of its session (the connection's SessionLike). */
interface TwinSession {
  readonly state: SessionState;
  readonly info: ServerInfo | undefined;
  request(method: string, params?: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/** Pages of a list read to learn the twin's names (a list longer than this routes its tail to the modern session). */
const MAX_PAGES = 20;

export class EraTwin<Session extends TwinSession = TwinSession> {
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
