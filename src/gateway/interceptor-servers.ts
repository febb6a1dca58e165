// The gateway's connections to interceptor servers (`.mcp.json`'s `interceptors`): made like any
// server's (stdio or Streamable HTTP, supervised, restarted), but never listed in the catalog nor
// routed to; each one's readiness lists its interceptors in the policy room's `Interceptors`, which
// the call gate asks. A server that cannot start leaves its interceptors unknown: the calls they
// would judge fail closed unless the rules make them fail-open.

import type { ServerConfig } from '../config/types.js';
import type { Logger } from '../observability/logger.js';
import type { Interceptors } from '../policy/interceptors.js';
import type { Connection, ConnectionHooks } from '../servers/connection.js';
import type { ConnectionFactory } from './gateway-options.js';
import type { InterceptorBinding } from '../rules/interceptors-config.js';

export class InterceptorServers {
  private readonly conns: Connection[] = [];

  constructor(
    private readonly configs: readonly ServerConfig[],
    private readonly interceptors: Interceptors,
    private readonly log: Logger,
  ) {}

  /** Starts every enabled interceptor server (not awaited by the gateway's settling: calls wait for their own). */
  start(connect: ConnectionFactory, bindings: readonly InterceptorBinding[] | undefined): void {
    // A binding of the rules that names no interceptor server judges nothing: say so once.
    const known = new Set(this.configs.map((c) => c.name));
    for (const use of new Set((bindings ?? []).map((b) => b.use)))
      if (!known.has(use))
        this.log.warn(`the rules bind interceptor server "${use}", which .mcp.json's "interceptors" does not name; it judges nothing`);
    for (const config of this.configs) {
      if (config.disabled) continue;
      const log = this.log.child({ interceptor: config.name });
      const hooks: ConnectionHooks = {
        notification: () => undefined,
        serverRequest: (conn, msg) =>
          conn.respondError(msg.id, { code: -32601, message: 'an interceptor server may not ask mcpgate anything' }),
        ready: (conn) => this.interceptors.ready(conn.name),
        interrupted: (conn) => this.interceptors.lost(conn.name),
        lost: (conn) => this.interceptors.lost(conn.name),
      };
      let conn: Connection;
      try {
        conn = connect(config, hooks, log);
      } catch (err) {
        // One interceptor server that cannot be made leaves its interceptors unknown, nothing else.
        log.error('an interceptor server could not be made; the calls its interceptors judge fail closed', {
          error: err instanceof Error ? err.message : String(err),
        });
        continue;
      }
      this.conns.push(conn);
      this.interceptors.add(conn);
      void conn.start().then((ready) => {
        if (!ready) {
          this.interceptors.unreachable(conn.name);
          log.warn('an interceptor server could not be started; the calls its interceptors judge fail closed', {
            error: conn.lastError?.message,
          });
        }
      });
    }
  }

  close(): Promise<unknown> {
    return Promise.allSettled(this.conns.map((conn) => conn.close()));
  }
}
