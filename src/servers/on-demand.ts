// An on-demand server's rest between calls (`"start": "on-demand"`): the start its calls wait for,
// the calls in flight that keep it up, and the `"idleStop"` timer that stops it when none is left.
// Its connection owns one (connection.ts) and keeps the states: it rests `idle` with its server
// listed from its last known catalog, a call routed to it wakes it, and the timer's end (`onIdle`,
// given at construction) is the connection stopping its session gracefully and resting again.
// Every call waiting on a start shares it; a failed start rejects them all with
// `MCPG_SERVER_UNAVAILABLE` ("could not be started on demand", the reason and the next step:
// unavailable.ts words it). The
// start that learns an unknown catalog stops once listed when there is no `idleStop`, unless a call
// waited for it. The timer is cleared on every close of the connection (`stop`).

import type { GatewayError } from '../errors.js';
import type { Clock, TimerHandle } from './clock.js';
import type { CallSink } from './session-types.js';

export class OnDemand {
  /** Times a call started the server, and times it was stopped for being idle. */
  starts = 0;
  stops = 0;
  /** The first start of a server with no known catalog, only to learn it. */
  learning = false;
  /** The calls forwarded and not ended yet: while any is, the server is not idle. */
  private readonly calls = new Set<{ id: number }>();
  private idleTimer: TimerHandle | undefined;
  /** Between `started` and `stop`: the server is up, so no call in flight means idle. */
  private up = false;
  /** The start a call (or the learning start) is waiting for. */
  private waking: { promise: Promise<void>; resolve: () => void; reject: (err: GatewayError) => void } | undefined;

  /**
   * `idleStop`: the entry's `"idleStop"` ms (none: it stays up once a call started it); `onIdle`:
   * stops the server, given how long it had no call.
   */
  constructor(
    private readonly idleStop: number | undefined,
    private readonly clock: Clock,
    private readonly onIdle: (idleMs: number) => void,
  ) {}

  /** Whether a call is in flight. */
  get busy(): boolean {
    return this.calls.size > 0;
  }

  /** Whether a start is waited for. */
  get waited(): boolean {
    return this.waking !== undefined;
  }

  /** The start under way (made now if none is): resolves when it is ready, rejects with why it failed. */
  wait(): Promise<void> {
    if (this.waking === undefined) {
      let resolve!: () => void;
      let reject!: (err: GatewayError) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // A start nobody waits for any more (the call was cancelled) must not be an unhandled rejection.
      promise.catch(() => {});
      this.waking = { promise, resolve, reject };
    }
    return this.waking.promise;
  }

  /** The server is ready: the waiting calls go on, and the idle timer starts if none is in flight. */
  started(): void {
    this.waking?.resolve();
    this.waking = undefined;
    this.up = true;
    this.check();
  }

  /** The start failed (or the connection closed): every waiting call gets `err`. */
  failed(err: GatewayError): void {
    const waking = this.waking;
    this.waking = undefined;
    waking?.reject(err);
  }

  /**
   * Forwards one call with `send`, counting it until it ends (answer, failure, or `cancelled`): while
   * any call is in flight the idle timer does not run. Returns `send`'s id (0: refused, not counted).
   */
  forward(sink: CallSink, send: (sink: CallSink) => number): number {
    const call = { id: 0 };
    this.calls.add(call);
    this.idleTimer?.cancel();
    this.idleTimer = undefined;
    const counted: CallSink = {
      ...(sink.progress !== undefined && { progress: (params) => sink.progress?.(params) }),
      ...(sink.paused !== undefined && { paused: (retryMs, resume) => sink.paused?.(retryMs, resume) }),
      reply: (res, line) => {
        this.ended(call);
        sink.reply(res, line);
      },
      fail: (err) => {
        this.ended(call);
        sink.fail(err);
      },
    };
    const id = send(counted);
    call.id = id;
    if (id === 0) this.ended(call);
    return id;
  }

  /** The call `id` was cancelled: it no longer keeps the server up. */
  cancelled(id: number): void {
    for (const call of this.calls) if (call.id === id) this.ended(call);
  }

  /** With no call in flight, a server that is up is stopped after its idle time. */
  private check(): void {
    if (this.calls.size > 0 || !this.up || this.idleTimer !== undefined) return;
    const delay = this.idleStop ?? (this.learning ? 0 : undefined);
    if (delay === undefined) return;
    this.idleTimer = this.clock.after(delay, () => {
      this.idleTimer = undefined;
      this.onIdle(delay);
    });
  }

  /** The session is gone (lost, stopped, closed): no idle timer runs for it. */
  stop(): void {
    this.up = false;
    this.idleTimer?.cancel();
    this.idleTimer = undefined;
  }

  private ended(call: { id: number }): void {
    if (!this.calls.delete(call)) return;
    this.check();
  }
}
