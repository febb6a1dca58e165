// A connection: mcpgate's supervised link to one server, which never gives up for good. A lost
// session is noticed at once, then it reconnects with full-jitter backoff while a retry budget lasts
// (its tools stay listed; calls get a retryable "restarting" error); when the budget is spent it
// *parks* (tools withdrawn, a slow self-probe, SIGHUP or a half-open breaker probe revives it).
// States: `connecting → ready → (lost) → backoff → connecting … → parked`, `closed` at shutdown,
// `idle` for a resting on-demand server. Every transition is in `transition()`; time comes from an
// injectable Clock. What a lost session leads to is decided by the supervision rules
// (supervision.ts, explained in this room's README); a call it cannot take is told why
// (unavailable.ts). Calls pass the circuit breaker (breaker.ts), and a paired dual-era server's
// 2025-era agents its twin (era-twin.ts).

import type { ServerConfig } from '../config/types.js';
import type { TransportFactory } from './transports/transport.js';
import { GatewayError, type JsonRpcErrorObject } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { JsonRpcNotification, JsonRpcRequest, RequestId } from '../wire/jsonrpc.js';
import { pairsEras, type SessionEra } from './modern-protocol.js';
import { EraPairing } from './era-twin.js';
import { OnDemand } from './on-demand.js';
import { breakerOpen, connectionClosed, nextStep, startFailed, unavailable, type ConnectionReading } from './unavailable.js';
import { ServerSession, type SessionHooks } from './server-session.js';
import type { CallSink, ServerInfo } from './session-types.js';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import { CircuitBreaker, type Admission } from './breaker.js';
import { afterLoss, supervisionOf, type SupervisionOptions, type SupervisionSettings } from './supervision.js';
import type { StopTimings } from './transports/transport.js';
import type { UpstreamCredentials } from './upstream-credentials.js';
import type { OutboundRequest } from './outbound-request.js';

// ── the connection ──────────────────────────────────────────────────────────────────────────────

const ADMITTED: Admission = { ok: true, probe: false };

export type ConnectionState = 'idle' | 'connecting' | 'ready' | 'backoff' | 'parked' | 'closed';

export interface ConnectionHooks {
  notification(conn: Connection, msg: JsonRpcNotification): void;
  /** `related`: the server id of the forwarded call the request belongs to, when the transport knows. */
  serverRequest(conn: Connection, msg: JsonRpcRequest, related?: number): void;
  /** A session is ready (first start or reconnect): list the server and publish it. Throwing fails the session. */
  ready(conn: Connection): Promise<void>;
  /**
   * The session was lost and the connection restarts it (backoff): what belonged to that session
   * ends (server questions, subscriptions), but the server stays listed — a restart is no list change.
   */
  interrupted(conn: Connection, reason: GatewayError): void;
  /** The server is no longer served for now (parked, closed): withdraw it. */
  lost(conn: Connection, reason: GatewayError | undefined): void;
}

interface ConnectionOptions {
  startupTimeoutMs: number;
  stopTimings?: StopTimings;
  supervision?: SupervisionSettings;
  clock?: Clock;
  /** Makes a session (tests substitute their own); default: a ServerSession over a stdio child. */
  sessionFactory?: (hooks: SessionHooks, ids: { next: number }) => SessionLike;
  /** How to reach the server (default: a stdio child; remote servers pass theirs). */
  transport?: TransportFactory;
  /** Names of mcpgate's own secret variables, never inherited by a stdio server. */
  secretEnv?: () => ReadonlySet<string>;
  /** A remote server's OAuth credentials: one per connection, so reconnects keep the tokens; a new login revives it. */
  credentials?: UpstreamCredentials;
  /** What mcpgate declares to the server; default `modern-protocol.ts` `CLIENT_CAPABILITIES`. */
  clientCapabilities?: Readonly<Record<string, unknown>>;
}

/** What the connection needs of a session (ServerSession, or a fake in unit tests). */
interface SessionLike {
  readonly state: 'connecting' | 'ready' | 'failed' | 'closed';
  readonly info: ServerInfo | undefined;
  readonly pid?: number | undefined;
  /** The era the session speaks, once started (fakes in unit tests may leave it out: 2025). */
  readonly era?: SessionEra;
  start(): Promise<void>;
  forward(req: OutboundRequest, sink: CallSink, timeoutMs?: number): number;
  request(method: string, params?: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** True (or nothing, for a session that never holds) when it had the call; `done` as `ServerSession.cancel`'s. */
  cancel(id: number, reason: string, done?: () => void): boolean | void;
  notify(method: string, params?: Record<string, unknown>): void;
  respond(id: RequestId, result: unknown): void;
  respondError(id: RequestId, error: JsonRpcErrorObject): void;
  close(): Promise<void>;
  destroy(): void;
}

export class Connection {
  readonly name: string;
  state: ConnectionState = 'connecting';
  lastError: GatewayError | undefined;
  /** Attempts since the last session that proved itself. */
  attempts = 0;
  nextAttemptAt: number | undefined;
  readonly breaker: CircuitBreaker;
  private session: SessionLike | undefined;
  private readonly ids = { next: 1 };
  /** An `"era": "auto"` server's era, once found: a reconnect does not probe again. */
  private readonly era: { known?: SessionEra } = {};
  /** A dual-era server's 2025 session beside the modern one (era-twin.ts), for 2025-era agents. */
  private readonly pairing: EraPairing<SessionLike>;
  private readonly opts: SupervisionOptions;
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private stableTimer: TimerHandle | undefined;
  private proven = false;
  private closing: Promise<void> | undefined;
  private firstSettle: ((ready: boolean) => void) | undefined;
  private unwatch: (() => void) | undefined;
  /** A session reached `ready` (the `ready` hook listed the server) and it has not been withdrawn since. */
  private listed = false;
  /** `"start": "on-demand"`: rests idle between calls. */
  readonly onDemand: boolean;
  /** An on-demand server's rest (on-demand.ts): its waited start, calls in flight and idle timer. */
  private readonly demand: OnDemand | undefined;

  constructor(
    readonly config: ServerConfig,
    private readonly hooks: ConnectionHooks,
    private readonly log: Logger,
    private readonly options: ConnectionOptions,
  ) {
    this.name = config.name;
    this.opts = supervisionOf(options.supervision);
    this.clock = options.clock ?? systemClock;
    this.breaker = new CircuitBreaker(this.opts.breaker, this.clock);
    this.onDemand = config.start === 'on-demand';
    this.demand = this.onDemand ? new OnDemand(config.idleStop, this.clock, (idleMs) => this.sleep(idleMs)) : undefined;
    this.pairing = new EraPairing(config.name, log);
  }

  get info(): ServerInfo | undefined {
    return this.pairing.info(this.state === 'ready' ? this.session?.info : undefined);
  }

  /** Times a call started this on-demand server, and times it was stopped for being idle. */
  get demandStarts(): number {
    return this.demand?.starts ?? 0;
  }
  get demandStops(): number {
    return this.demand?.stops ?? 0;
  }

  get pid(): number | undefined {
    return this.session?.pid;
  }

  /**
   * Starts supervising; resolves with whether the first attempt made the server ready (it keeps trying
   * either way). For an on-demand server this is the start that learns its catalog (none is known):
   * once listed it stops after `idleStop`, or at once without one (no call asked for it).
   */
  start(): Promise<boolean> {
    const settled = new Promise<boolean>((resolve) => (this.firstSettle = resolve));
    this.unwatch ??= this.options.credentials?.watch(() => this.revive('new credentials were stored'));
    if (this.demand !== undefined) this.demand.learning = true;
    void this.attempt();
    return settled;
  }

  /**
   * An on-demand server whose last known catalog the caller lists: supervised without a session
   * (`idle`) until a call wakes it. A later park withdraws that listing like a live one.
   */
  rest(): void {
    if (!this.onDemand || this.closing !== undefined) return;
    this.unwatch ??= this.options.credentials?.watch(() => this.revive('new credentials were stored'));
    this.listed = true;
    this.transition('idle', 'listed from its last known catalog; started on its first call');
  }

  /**
   * An on-demand server is needed by a call: resolves once it is ready (started now if idle; a start
   * under way is waited for, bounded by the start-up timeout), or fails with why it could not start.
   * A server backing off or parked fails at once with the usual retryable error: calls never start
   * it faster than its backoff allows.
   */
  wake(): Promise<void> {
    if (this.state === 'ready') return Promise.resolve();
    const demand = this.demand;
    if (demand === undefined) return Promise.reject(this.unavailable());
    demand.learning = false;
    if (this.state === 'idle') {
      demand.starts += 1;
      this.log.info(`starting server "${this.name}" on demand`);
      void demand.wait();
      void this.attempt();
    } else if (this.state !== 'connecting') {
      return Promise.reject(this.unavailable());
    }
    return demand.wait();
  }

  /** What status and the console show: the state, with an on-demand server's rest spelled out. */
  get shownState(): string {
    return this.state === 'idle' ? 'idle (on demand)' : this.state;
  }

  /** What happens next, for messages: "retrying in 240 ms (attempt 2 of 5)" or "parked" (unavailable.ts words it). */
  get nextStep(): string | undefined {
    const { retries, parkProbeMs } = this.opts;
    return nextStep(this.reading(), {
      attempts: this.attempts,
      retries,
      parkProbeMs,
      loginCommand: this.options.credentials?.loginCommand,
    });
  }

  /** Revive now: a parked or backing-off connection attempts at once with a fresh budget. */
  revive(why: string): void {
    if (this.state !== 'parked' && this.state !== 'backoff') return;
    this.log.info(`reviving server "${this.name}" (${why})`);
    this.attempts = 0;
    this.timer?.cancel();
    void this.attempt();
  }

  // ── calls ─────────────────────────────────────────────────────────────────────────────────────

  /**
   * Forwards an agent's call through the breaker; an unreachable server fails fast and says when it
   * is tried again. `agentEra`: the era of the agent making the call — a dual-era server takes a
   * 2025-era agent's call on its 2025 session where that session shows what the call names.
   */
  forward(req: OutboundRequest, sink: CallSink, timeoutMs?: number, agentEra?: SessionEra): number {
    // A closed breaker admits every call: read as a field, so a healthy call runs no breaker code.
    const admission = this.breaker.state === 'closed' ? ADMITTED : this.breaker.admit();
    if (!admission.ok) {
      sink.fail(breakerOpen(this.name, this.breaker, admission.retryAt, this.clock.now()));
      return 0;
    }
    const twin = this.pairing.twin;
    const session = agentEra === 'legacy' && twin !== undefined && twin.routes(req) ? twin.session : this.session;
    if (this.state !== 'ready' || session === undefined || session.state !== 'ready') {
      if (admission.probe) {
        // A probe that finds no live session must not write into a dead pipe: ask for a reconnect.
        this.breaker.probeAborted();
        this.revive('a call found no live session');
        sink.fail(
          new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${this.name}" is reconnecting; try again shortly`, {
            server: this.name,
            detail: { state: this.state, retryable: true },
          }),
        );
        return 0;
      }
      sink.fail(this.unavailable());
      return 0;
    }
    // An on-demand server is busy while this call is: its end (answer, failure, cancel) may make it idle.
    const id =
      this.demand === undefined
        ? session.forward(req, sink, timeoutMs)
        : this.demand.forward(sink, (counted) => session.forward(req, counted, timeoutMs));
    // Refused before it was sent: a probe that never left has no outcome to wait for.
    if (id === 0 && admission.probe) this.breaker.probeAborted();
    return id;
  }

  request(method: string, params?: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>> {
    if (this.session === undefined || this.state !== 'ready') return Promise.reject(this.unavailable());
    // The 2025 session's own methods (the modern revision removed them) go to the twin when there is one.
    return (this.pairing.requestTarget(method) ?? this.session).request(method, params, timeoutMs);
  }

  /**
   * Cancels call `id`. `done` runs once the server is through with it: it answered the call anyway,
   * its session ended, or a grace period passed (servers/abandoned-calls.ts); at once when no session
   * has the call.
   */
  cancel(id: number, reason: string, done?: () => void): void {
    this.demand?.cancelled(id);
    // Ids are shared by the connection's sessions: the one that has the call cancels it.
    const held = this.session?.cancel(id, reason, done) === true || this.pairing.twin?.session.cancel(id, reason, done) === true;
    if (!held) done?.();
  }

  notify(method: string, params?: Record<string, unknown>): void {
    if (this.state !== 'ready') return;
    this.session?.notify(method, params);
    this.pairing.twin?.session.notify(method, params);
  }

  respond(id: RequestId, result: unknown): void {
    (this.pairing.answerer(id) ?? this.session)?.respond(id, result);
  }

  respondError(id: RequestId, error: JsonRpcErrorObject): void {
    (this.pairing.answerer(id) ?? this.session)?.respondError(id, error);
  }

  /** Graceful: stop supervising, close the session (a stdio server: stdin EOF, SIGTERM, SIGKILL). Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.unwatch?.();
      this.timer?.cancel();
      this.stableTimer?.cancel();
      this.demand?.stop();
      this.demand?.failed(this.closedError());
      const session = this.session;
      const twin = this.pairing.unpair();
      this.transition('closed');
      this.firstSettle?.(false);
      await Promise.all([session?.close(), twin?.close()]);
    })();
    return this.closing;
  }

  destroy(): void {
    this.unwatch?.();
    this.timer?.cancel();
    this.stableTimer?.cancel();
    this.demand?.stop();
    this.demand?.failed(this.closedError());
    this.session?.destroy();
    this.pairing.unpair()?.destroy();
    this.transition('closed');
  }

  // ── supervision ───────────────────────────────────────────────────────────────────────────────

  private async attempt(): Promise<void> {
    if (this.closing !== undefined) return;
    this.timer = undefined;
    this.nextAttemptAt = undefined;
    const previous = this.state;
    this.transition('connecting');
    this.attempts += 1;
    const session = this.createSession();
    this.session = session;
    try {
      await session.start();
      if (this.closing !== undefined || this.session !== session) return;
      // A server found modern may serve 2025-era agents on a session of their own (era-twin.ts).
      if (pairsEras(this.config) && this.options.sessionFactory === undefined)
        await this.pairing.pair(session, () => this.createSession(true));
      if (this.closing !== undefined || this.session !== session) return;
      this.transition('ready');
      this.listed = true;
      await this.hooks.ready(this);
      if (this.session !== session || session.state !== 'ready') return;
      this.lastError = undefined;
      this.breaker.reset();
      this.proven = false;
      this.stableTimer?.cancel();
      this.stableTimer = this.clock.after(this.opts.stableMs, () => this.prove('stayed up'));
      if (previous === 'idle') this.log.info(`server "${this.name}" started on demand`, { pid: session.pid });
      else if (previous !== 'connecting') this.log.info(`server "${this.name}" is back`, { attempts: this.attempts });
      this.settleFirst(true);
      this.demand?.started();
    } catch (err) {
      if (this.closing !== undefined || this.session !== session) return;
      const reason =
        err instanceof GatewayError
          ? err
          : new GatewayError('MCPG_SERVER_START_FAILED', `server "${this.name}": ${String(err)}`, { server: this.name });
      void session.close();
      this.sessionEnded(session, reason);
    }
  }

  /** The twin was lost: the connection's session is lost with it (the server is the pair). */
  private twinLost(twinSession: SessionLike, reason: GatewayError): void {
    if (!this.pairing.isTwin(twinSession)) return;
    const primary = this.session;
    void this.pairing.unpair()?.close();
    if (primary === undefined) return;
    void primary.close();
    this.sessionEnded(primary, reason);
  }

  private createSession(twin = false): SessionLike {
    const hooks = {
      notification: (_s: unknown, msg: JsonRpcNotification) => {
        if (twin && (msg.method === 'notifications/tools/list_changed' || msg.method === 'notifications/prompts/list_changed'))
          this.pairing.relearn();
        this.hooks.notification(this, msg);
      },
      request: (_s: unknown, msg: JsonRpcRequest, related?: number) => {
        if (twin) this.pairing.ask(msg.id);
        this.hooks.serverRequest(this, msg, related);
      },
      state: (s: SessionLike, state: string, reason?: GatewayError) => {
        if (state !== 'failed' || s.info === undefined) return;
        if (twin) this.twinLost(s, reason ?? this.unavailable());
        else this.sessionEnded(s, reason ?? this.unavailable());
      },
      outcome: (_s: unknown, ok: boolean) => {
        if (ok) {
          if (this.breaker.failures !== 0 || this.breaker.state !== 'closed') this.breaker.success();
          if (!this.proven) this.prove('answered a call');
        } else {
          this.breaker.failure();
        }
      },
    };
    if (this.options.sessionFactory !== undefined) return this.options.sessionFactory(hooks, this.ids);
    // The twin is initialized straight away, with the share of the startup time a probe gets.
    const start = twin
      ? { startupTimeoutMs: Math.max(1, Math.floor(this.options.startupTimeoutMs / 2)), era: { known: 'legacy' as const } }
      : { startupTimeoutMs: this.options.startupTimeoutMs, era: this.era };
    return new ServerSession(this.config, hooks, this.log, {
      ...start,
      stopTimings: this.options.stopTimings,
      ids: this.ids,
      transport: this.options.transport,
      secretEnv: this.options.secretEnv,
      credentials: this.options.credentials,
      clientCapabilities: this.options.clientCapabilities,
    });
  }

  /** The budget resets only once a session has shown it works. */
  private prove(how: string): void {
    if (this.proven || this.state !== 'ready') return;
    this.proven = true;
    this.attempts = 0;
    this.log.debug(`server "${this.name}" session proved itself (${how})`);
  }

  /**
   * A session failed to start or was lost: back off (the server stays listed; the `interrupted` hook
   * ends what belonged to the session), or park (the `lost` hook withdraws it).
   */
  private sessionEnded(session: SessionLike, reason: GatewayError): void {
    if (this.session !== session || this.closing !== undefined) return;
    if (this.state === 'backoff' || this.state === 'parked') return;
    void this.pairing.unpair()?.close();
    this.stableTimer?.cancel();
    this.demand?.stop();
    this.lastError = reason;
    const wasServing = this.state === 'ready';
    const next = afterLoss(reason, { attempts: this.attempts, listed: this.listed }, this.opts, () => this.clock.random());
    if (next.next === 'backoff') {
      this.nextAttemptAt = this.clock.now() + next.delayMs;
      if (wasServing) this.hooks.interrupted(this, reason);
      this.transition('backoff', next.detail);
      this.timer = this.clock.after(next.delayMs, () => void this.attempt());
    } else {
      // Parked: withdrawn. Until new credentials nothing is scheduled (their watch revives it, or
      // SIGHUP); else one probe every `probeMs`, which parks again if it fails.
      this.nextAttemptAt = next.next === 'park' ? this.clock.now() + next.probeMs : undefined;
      this.withdraw(reason);
      this.transition('parked', next.detail);
      if (next.next === 'park')
        this.timer = this.clock.after(next.probeMs, () => {
          this.attempts = Math.max(0, this.opts.retries - 1);
          void this.attempt();
        });
    }
    this.settleFirst(false);
    if (this.demand?.waited === true) this.demand.failed(this.startFailed(reason));
  }

  // ── on demand ─────────────────────────────────────────────────────────────────────────────────

  /**
   * Stops an idle on-demand server gracefully (stdin EOF, SIGTERM, SIGKILL of its process group) and
   * rests: its server stays listed (the catalog keeps what it last listed), what belonged to the
   * session ends (the `interrupted` hook), and the next call starts it again.
   */
  private sleep(idleMs: number): void {
    const demand = this.demand;
    if (demand === undefined || demand.busy || this.state !== 'ready' || this.closing !== undefined) return;
    const session = this.session;
    const twin = this.pairing.unpair();
    this.session = undefined;
    this.stableTimer?.cancel();
    demand.stop();
    const learned = demand.learning;
    demand.learning = false;
    if (!learned) demand.stops += 1;
    this.transition(
      'idle',
      learned ? 'its catalog is learned; stopped until its first call' : `no call for ${idleMs} ms: stopped until the next call`,
    );
    this.hooks.interrupted(
      this,
      new GatewayError('MCPG_SERVER_UNAVAILABLE', `server "${this.name}" was stopped while idle`, { server: this.name }),
    );
    void Promise.all([session?.close(), twin?.close()]).catch((err: unknown) =>
      this.log.warn('an idle server did not stop cleanly', { server: this.name, error: err }),
    );
  }

  /** Parking: a server still listed (serving now, or kept through a restart) is withdrawn, once. */
  private withdraw(reason: GatewayError | undefined): void {
    if (!this.listed) return;
    this.listed = false;
    this.hooks.lost(this, reason);
  }

  private settleFirst(ready: boolean): void {
    const settle = this.firstSettle;
    this.firstSettle = undefined;
    settle?.(ready);
  }

  /** The one place states change; each transition is logged once. */
  private transition(state: ConnectionState, detail?: string): void {
    if (this.state === state) return;
    const from = this.state;
    this.state = state;
    if (state === 'closed' && from !== 'closed') {
      this.listed = false;
      this.hooks.lost(this, undefined);
    }
    // The first attempt's outcome is the gateway's startup summary line; later transitions are logged here.
    if (this.firstSettle !== undefined) return;
    const message = `server "${this.name}": ${from} → ${state}${detail !== undefined ? `: ${detail}` : ''}`;
    if (state === 'parked') this.log.warn(message, { state });
    else this.log.info(message, { state });
  }

  /** Why the start a call waited for failed (unavailable.ts words it). */
  private startFailed(reason: GatewayError): GatewayError {
    return startFailed(reason, this.reading(), this.nextStep);
  }

  private closedError(): GatewayError {
    return connectionClosed(this.name);
  }

  /** Why a call cannot go now (unavailable.ts words it). */
  private unavailable(): GatewayError {
    return unavailable(this.reading());
  }

  /** What the words of a refused call read of this connection now. */
  private reading(): ConnectionReading {
    const { name: server, state, lastError, nextAttemptAt, listed } = this;
    return { server, state, lastError, nextAttemptAt, listed, now: this.clock.now() };
  }
}
