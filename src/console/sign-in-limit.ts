// Sign-in rate limiting for the console: failed sign-ins are counted per client address and, against
// guessing spread over many addresses, in total. Past its address's limit a sign-in is answered 429
// with Retry-After until the window ends, without looking at the token. Past only the total (a much
// higher ceiling) the console still checks the token, so failures from other addresses never lock a
// valid admin out; a wrong token then gets 429 (console.ts). A successful sign-in
// clears its address's count. Bounded memory: at most MAX_ADDRESSES addresses are remembered (the
// oldest forgotten first, expired ones before that). The sign-in names no one — the token alone says
// which admin it is — so there is no per-name count: a wrong token belongs to nobody.
// The defaults: 5 failures a minute per address, 500 a minute in total, 10,000 addresses remembered;
// counted per process (shared-sign-in-limit.ts adds the cluster's counts).

interface SignInLimits {
  /** Failed sign-ins one address may make per window (default 5). */
  perAddress?: number;
  /** Failed sign-ins from all addresses together per window (default 500). */
  total?: number;
  /** The window, ms (default 60 s). */
  windowMs?: number;
  /** Addresses remembered at most (default 10 000). */
  maxAddresses?: number;
  now?: () => number;
}

interface Window {
  start: number;
  failures: number;
}

export class SignInLimiter {
  readonly perAddress: number;
  readonly total: number;
  readonly windowMs: number;
  private readonly maxAddresses: number;
  private readonly now: () => number;
  private readonly addresses = new Map<string, Window>();
  private all: Window = { start: 0, failures: 0 };

  constructor(limits: SignInLimits = {}) {
    this.perAddress = limits.perAddress ?? 5;
    this.total = limits.total ?? 500;
    this.windowMs = limits.windowMs ?? 60_000;
    this.maxAddresses = limits.maxAddresses ?? 10_000;
    this.now = limits.now ?? Date.now;
  }

  /**
   * Undefined when `address` may try now; else which limit holds (its own address's first) and the
   * seconds until its window ends.
   */
  retryAfter(address: string): { scope: 'address' | 'total'; seconds: number } | undefined {
    const now = this.now();
    const own = this.current(this.addresses.get(address), now);
    const all = this.current(this.all, now);
    const seconds = (w: Window): number => Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    if (own !== undefined && own.failures >= this.perAddress) return { scope: 'address', seconds: seconds(own) };
    if (all !== undefined && all.failures >= this.total) return { scope: 'total', seconds: seconds(all) };
    return undefined;
  }

  failed(address: string): void {
    const now = this.now();
    this.all = this.current(this.all, now) ?? { start: now, failures: 0 };
    this.all.failures += 1;
    let own = this.current(this.addresses.get(address), now);
    if (own === undefined) {
      this.addresses.delete(address);
      if (this.addresses.size >= this.maxAddresses) this.makeRoom(now);
      own = { start: now, failures: 0 };
      this.addresses.set(address, own);
    }
    own.failures += 1;
  }

  succeeded(address: string): void {
    this.addresses.delete(address);
  }

  /** How many addresses are remembered (for tests of the bound). */
  get size(): number {
    return this.addresses.size;
  }

  private current(window: Window | undefined, now: number): Window | undefined {
    return window !== undefined && now - window.start < this.windowMs ? window : undefined;
  }

  private makeRoom(now: number): void {
    for (const [address, window] of this.addresses) if (this.current(window, now) === undefined) this.addresses.delete(address);
    // Still full: forget the oldest (Map order is insertion order).
    while (this.addresses.size >= this.maxAddresses) this.addresses.delete(this.addresses.keys().next().value!);
  }
}
