// A modern (2026-07-28) server session's change notifications: the `subscriptions/listen` request kept
// open for the list changes the server's capabilities announce and the URIs agents subscribed to
// (`resources/subscribe` to a modern server is answered here and reopens the listen with the new
// filter). It has no timeout, is reopened when it ends, and is given up after MAX_LISTEN_FAILURES
// failures in a row. The server session owns one (server-session.ts) and gives it `ListenHost`.

import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { listenFilter } from './era.js';
import type { CallSink, ServerInfo } from './session-types.js';

/** A listen stream that keeps failing is given up after this many tries in a row (logged). */
const MAX_LISTEN_FAILURES = 5;
const LISTEN_RETRY_MS = 1000;

/** What the listen stream needs of its session. */
export interface ListenHost {
  readonly log: Logger;
  /** The session is ready and not closing. */
  ready(): boolean;
  info(): ServerInfo | undefined;
  call(method: string, params: Record<string, unknown> | undefined, sink: CallSink, timeoutMs: number): number;
  cancel(id: number, reason: string): void;
  /** Request `id` is in flight. */
  pending(id: number): boolean;
}

export class ListenStream {
  /** The open `subscriptions/listen` request's id, and its failures in a row. */
  private listenId: number | undefined;
  private listenFailures = 0;
  private listenTimer: NodeJS.Timeout | undefined;
  private readonly resourceSubscriptions = new Set<string>();

  constructor(private readonly host: ListenHost) {}

  /**
   * Opens the `subscriptions/listen` request that carries a modern server's change notifications (it
   * stays open; its answer, or its failure, ends it and it is reopened, up to MAX_LISTEN_FAILURES in
   * a row). Reopened with the new filter when the resource subscriptions change.
   */
  open(): void {
    if (this.listenId !== undefined) {
      const old = this.listenId;
      this.listenId = undefined;
      this.host.cancel(old, 'the subscription filter changed');
    }
    const info = this.host.info();
    if (!this.host.ready() || info === undefined) return;
    const filter = listenFilter(info.capabilities, this.resourceSubscriptions);
    if (filter === undefined) return;
    // Declared before the call: a write that fails at once ends the listen inside call() itself.
    let id = 0;
    const ended = (why: string): void => {
      if (this.listenId !== id) return;
      this.listenId = undefined;
      if (!this.host.ready()) return;
      this.listenFailures += 1;
      if (this.listenFailures > MAX_LISTEN_FAILURES) return this.host.log.warn('the subscriptions/listen stream keeps ending; change notifications from this server are not followed', { why });
      this.listenTimer = setTimeout(() => this.open(), LISTEN_RETRY_MS);
      this.listenTimer.unref();
    };
    id = this.host.call('subscriptions/listen', { notifications: filter }, {
      reply: (msg) => ended('error' in msg ? msg.error.message : 'the server ended the subscription'),
      fail: (err) => ended(err.message),
    }, Infinity);
    if (this.host.pending(id)) this.listenId = id;
  }

  /** The server acknowledged the stream (`notifications/subscriptions/acknowledged`): it works. */
  acknowledged(): void {
    this.listenFailures = 0;
  }

  /** The session ended: no reopening. */
  stop(): void {
    clearTimeout(this.listenTimer);
  }

  /**
   * `resources/subscribe` / `unsubscribe` to a modern server: the revision has neither; the URI joins
   * (or leaves) the listen stream's filter, which is reopened, and the agent gets the empty result.
   */
  subscribe(method: string, uri: unknown, sink: CallSink): void {
    if (typeof uri !== 'string') return sink.fail(new GatewayError('MCPG_INVALID_PARAMS', `${method}: params.uri must be a string`));
    const had = this.resourceSubscriptions.has(uri);
    if (method === 'resources/subscribe') this.resourceSubscriptions.add(uri);
    else this.resourceSubscriptions.delete(uri);
    if (had !== this.resourceSubscriptions.has(uri)) this.open();
    sink.reply({ jsonrpc: '2.0', id: 0, result: {} }, '{"jsonrpc":"2.0","id":0,"result":{}}');
  }
}
