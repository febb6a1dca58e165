// The requests one server session has sent and not yet had answered: each by the call's own id, with
// its deadline and ceiling, and the id its latest input round went out under where that differs
// (`SentRequest.wireId`). The server session (server-session.ts) says what an answer, a failure or
// an overdue call does; this table only keeps them. Timeouts are one sweep per table (a tenth of the
// shortest timeout, 10 ms–1 s), not a timer per call: creating and clearing a Node timer on every call
// of a sequential agent rebuilds the timer list each time, measurably on the hot path.

import type { SentRequest } from './session-types.js';

const MIN_SWEEP_MS = 10;
const MAX_SWEEP_MS = 1000;

export class SentRequests {
  private readonly byId = new Map<number, SentRequest>();
  /** The ids of retried rounds on the wire → their calls' own ids (`SentRequest.wireId`). */
  private readonly wireIds = new Map<number, number>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweepMs = Infinity;

  /**
   * @param ceilingMs the server's `limits.maxCallMs`, which bounds the sweep's period as a timeout does
   * @param overdue called by the sweep for each request past its deadline (the entry is still held)
   */
  constructor(
    private readonly ceilingMs: number,
    private readonly overdue: (id: number, entry: SentRequest) => void,
  ) {}

  /** The request sent under the call's own id `id`. */
  get(id: number): SentRequest | undefined {
    return this.byId.get(id);
  }

  /** Holds `entry` under `id` until it is settled; the sweep runs at least as often as its timeout needs. */
  track(id: number, entry: SentRequest): void {
    this.byId.set(id, entry);
    const period = Math.max(MIN_SWEEP_MS, Math.min(MAX_SWEEP_MS, Math.floor(Math.min(entry.timeoutMs, this.ceilingMs) / 10)));
    if (period >= this.sweepMs) return;
    this.sweepMs = period;
    clearInterval(this.sweepTimer);
    this.sweepTimer = setInterval(() => this.sweep(), period);
    this.sweepTimer.unref(); // the transport keeps the loop alive, not this
  }

  /**
   * The call an id on the wire belongs to: a retried round's id maps to its call's; the id a call was
   * first sent under is no longer its own once a round went out under another (undefined: a late
   * answer to it is dropped). Any other id is returned as it is: whether a call has it, `get` or
   * `settle` tell.
   */
  callOf(wireId: number): number | undefined {
    const call = this.wireIds.get(wireId);
    if (call !== undefined) return call;
    return this.byId.get(wireId)?.wireId === undefined ? wireId : undefined;
  }

  /** Call `callId`'s next round goes out under `wireId`. */
  renumber(callId: number, wireId: number): void {
    const entry = this.byId.get(callId)!;
    if (entry.wireId !== undefined) this.wireIds.delete(entry.wireId);
    entry.wireId = wireId;
    this.wireIds.set(wireId, callId);
  }

  /** Takes call `id` out of the table: its answer, failure or cancel is the caller's to deliver. */
  settle(id: number): SentRequest | undefined {
    const entry = this.byId.get(id);
    if (entry === undefined) return undefined;
    this.byId.delete(id);
    if (entry.wireId !== undefined) this.wireIds.delete(entry.wireId);
    return entry;
  }

  /** Progress on call `id`: its deadline moves back by its timeout, never past its ceiling. */
  progressed(id: number): SentRequest | undefined {
    const entry = this.byId.get(id);
    if (entry === undefined) return undefined;
    entry.progressAt = performance.now();
    entry.deadline = Math.min(entry.progressAt + entry.timeoutMs, entry.ceiling);
    return entry;
  }

  /** Terminal: every request is taken out and returned, and the sweep stops. */
  takeAll(): SentRequest[] {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.sweepMs = Infinity;
    const entries = [...this.byId.values()];
    this.byId.clear();
    this.wireIds.clear();
    return entries;
  }

  private sweep(): void {
    if (this.byId.size === 0) return;
    const now = performance.now();
    for (const [id, entry] of this.byId) if (entry.deadline <= now) this.overdue(id, entry);
  }
}
