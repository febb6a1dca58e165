// Abandoned calls: requests a server session cancelled (for its agent) that the server may still be
// working on. Cancellation is a request to stop, not proof that the work stopped: a server may finish
// the call anyway and answer late, and one that honours it sends nothing. Whoever still counts the
// call (a calls-in-flight limit) is told it is over when the server answers it, when the session ends,
// or once a grace period has passed (never past the call's own deadline), whichever comes first.

/** How long a cancelled call still counts as the server's work when the server says nothing. */
const ABANDONED_GRACE_MS = 5_000;

/** Calls held at once per session: past it the oldest is let go (each is an ended call's hold). */
const MAX_HELD = 10_000;

export class AbandonedCalls {
  /** The id the call went to the server under → its end (idempotent). */
  private readonly held = new Map<number, () => void>();

  /** The call `wireId` was cancelled: `done` runs once it is over for the server (see the header). */
  hold(wireId: number, msLeft: number, done: () => void): void {
    if (this.held.size >= MAX_HELD) this.held.values().next().value?.();
    this.held.get(wireId)?.();
    const end = (): void => {
      if (this.held.get(wireId) !== end) return;
      this.held.delete(wireId);
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(end, Math.max(0, Math.min(ABANDONED_GRACE_MS, msLeft))).unref();
    this.held.set(wireId, end);
  }

  /** The server answered `wireId`: true when it was an abandoned call (now over), else false. */
  answered(wireId: unknown): boolean {
    const end = typeof wireId === 'number' ? this.held.get(wireId) : undefined;
    if (end === undefined) return false;
    end();
    return true;
  }

  /** The session ended: no call of it is the server's work any more. */
  clear(): void {
    for (const end of [...this.held.values()]) end();
  }
}
