// A run's wall clock: it counts the time the run takes except while an inner call waits on a person
// (an approval), and fires once when the run has used its allowance.

export class RunClock {
  private used = 0;
  /** When the clock last started counting; undefined while paused or stopped. */
  private since: number | undefined;
  private waits = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly allowanceMs: number,
    private readonly expired: () => void,
  ) {}

  start(): void {
    this.since = performance.now();
    this.arm();
  }

  /** Milliseconds counted so far. */
  elapsed(): number {
    return this.used + (this.since === undefined ? 0 : performance.now() - this.since);
  }

  /** Milliseconds left; Infinity while paused (nothing counts then). */
  remaining(): number {
    if (this.since === undefined) return this.stopped ? 0 : Number.POSITIVE_INFINITY;
    return this.allowanceMs - this.elapsed();
  }

  /** One more wait on a person begins: the clock stops counting until every such wait has ended. */
  pause(): void {
    if (this.stopped) return;
    this.waits += 1;
    if (this.waits > 1 || this.since === undefined) return;
    this.used += performance.now() - this.since;
    this.since = undefined;
    this.disarm();
  }

  /** One wait on a person ended. */
  resume(): void {
    if (this.stopped || this.waits === 0) return;
    this.waits -= 1;
    if (this.waits > 0) return;
    this.since = performance.now();
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.since !== undefined) this.used += performance.now() - this.since;
    this.since = undefined;
    this.disarm();
  }

  private arm(): void {
    this.disarm();
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        // A timer may fire a little early or late; re-arm for what is really left.
        if (this.remaining() > 0) this.arm();
        else this.expired();
      },
      Math.max(0, this.remaining()),
    );
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
