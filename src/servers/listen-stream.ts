// A modern server's change notifications: the `subscriptions/listen` request its session keeps open
// for the list changes the server's capabilities announce and the resource URIs agents subscribed
// to. It has no timeout; its answer or its failure ends it and it is reopened a second later, up to
// MAX_LISTEN_FAILURES ends in a row (then it is given up, logged); the server's
// `notifications/subscriptions/acknowledged` says it works. The revision has no
// `resources/subscribe`: a subscribe or unsubscribe to a modern server is answered here, and the URI
// joins or leaves the filter, which reopens the listen. It is sent through the session it belongs
// to (server-session.ts), which opens it once the server is ready and stops it when it ends.

import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { listenFilter } from './modern-protocol.js';
import type { CallSink, ServerInfo, SessionState } from './session-types.js';

/** A listen stream that keeps failing is given up after this many tries in a row (logged). */
const MAX_LISTEN_FAILURES = 5;
const LISTEN_RETRY_MS = 1000;

/** What the stream is sent through: the server session it belongs to (server-session.ts). */
interface Listening {
  readonly state: SessionState;
  readonly stopping: boolean;
  readonly info: ServerInfo | undefined;
  /** Sends a request whose answer goes to `sink`; returns its id. */
  call(method: string, params: Record<string, unknown> | undefined, sink: CallSink, timeoutMs?: number): number;
  cancel(id: number, reason: string): void;
}

export class ListenStream {
  /** The open listen request's id on the session, and its failures in a row. */
  private id: number | undefined;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The resource URIs agents subscribed to, the listen's filter. */
  private readonly resources = new Set<string>();

  constructor(
    private readonly session: Listening,
    private readonly log: Logger,
  ) {}

  /**
   * Opens the listen request (it stays open; its answer, or its failure, ends it and it is reopened,
   * up to MAX_LISTEN_FAILURES in a row). Reopened with the new filter when the resource
   * subscriptions change.
   */
  open(): void {
    const session = this.session;
    if (this.id !== undefined) {
      const old = this.id;
      this.id = undefined;
      session.cancel(old, 'the subscription filter changed');
    }
    const info = session.info;
    if (session.state !== 'ready' || session.stopping || info === undefined) return;
    const filter = listenFilter(info.capabilities, this.resources);
    if (filter === undefined) return;
    // Declared before the call: a write that fails at once ends the listen inside call() itself.
    let id = 0;
    let ended = false;
    const end = (why: string): void => {
      ended = true;
      if (this.id !== id) return;
      this.id = undefined;
      if (session.state !== 'ready' || session.stopping) return;
      this.failures += 1;
      if (this.failures > MAX_LISTEN_FAILURES)
        return this.log.warn('the subscriptions/listen stream keeps ending; change notifications from this server are not followed', {
          why,
        });
      this.timer = setTimeout(() => this.open(), LISTEN_RETRY_MS);
      this.timer.unref();
    };
    id = session.call(
      'subscriptions/listen',
      { notifications: filter },
      {
        reply: (msg) => end('error' in msg ? msg.error.message : 'the server ended the subscription'),
        fail: (err) => end(err.message),
      },
      Infinity,
    );
    if (!ended) this.id = id;
  }

  /** The server acknowledged the stream (`notifications/subscriptions/acknowledged`): it works. */
  acknowledged(): void {
    this.failures = 0;
  }

  /**
   * `resources/subscribe` / `unsubscribe` to a modern server: the revision has neither; the URI joins
   * (or leaves) the listen stream's filter, which is reopened, and the agent gets the empty result.
   */
  subscribe(method: string, uri: unknown, sink: CallSink): void {
    if (typeof uri !== 'string') return sink.fail(new GatewayError('MCPG_INVALID_PARAMS', `${method}: params.uri must be a string`));
    const had = this.resources.has(uri);
    if (method === 'resources/subscribe') this.resources.add(uri);
    else this.resources.delete(uri);
    if (had !== this.resources.has(uri)) this.open();
    sink.reply({ jsonrpc: '2.0', id: 0, result: {} }, '{"jsonrpc":"2.0","id":0,"result":{}}');
  }

  /** The session ended: the stream is not reopened. */
  stop(): void {
    clearTimeout(this.timer);
  }
}
