// The console's sign-in limit across the workers of a cluster (`--redis`): each worker's own
// limiter (sign-in-limit.ts) still counts and decides, and the counts the workers share (through
// the cluster's Redis: cluster/sign-in-counts.ts implements SharedSignInCounter) are added on top —
// an address's failures on every worker together meet its limit, and all workers' failures meet the
// total. The stricter of the two counts wins, so what the shared store says can only tighten the
// per-worker limit: someone who can write to that store can lock an address out (a window at a time)
// or make the counts start from zero, never let more through than one worker alone would. The design
// is kept: past only the total, the token is still checked (a right token is never refused by
// others' failures). When the shared counts cannot be had (Redis down), each worker limits alone, and
// the log says so once (and again when they are back).
// The composition root hands the cluster's counter over. Limiting alone, an address gets N × 5 tries a
// minute on N workers, and `/status`'s `cluster.sign_in_limit` says `per-worker`.

import type { Logger } from '../observability/logger.js';
import type { SignInLimiter } from './sign-in-limit.js';

/** The failures counted by every worker in the current windows, and the ms left in each. */
export interface SharedCounts {
  address: number;
  addressMs: number;
  total: number;
  totalMs: number;
}

/** The workers' shared failure counts; each answers undefined when the shared store cannot be used. */
export interface SharedSignInCounter {
  read(address: string, windowMs: number): Promise<SharedCounts | undefined>;
  /** Counts a failure of `address` (and of all); past `total`, addresses not yet counted are not added. */
  fail(address: string, windowMs: number, total: number): Promise<SharedCounts | undefined>;
  clear(address: string): Promise<void>;
}

type Limited = { scope: 'address' | 'total'; seconds: number } | undefined;

export class SharedSignInLimit {
  /** Whether the last use of the shared counts worked (undefined: not used yet). */
  private sharing: boolean | undefined;

  constructor(
    private readonly local: SignInLimiter,
    private readonly shared: SharedSignInCounter | undefined,
    private readonly log: Logger,
  ) {}

  /** As SignInLimiter.retryAfter, over this worker's counts and the shared ones. */
  async retryAfter(address: string): Promise<Limited> {
    const own = this.local.retryAfter(address);
    if (own?.scope === 'address' || this.shared === undefined) return own;
    const counts = this.noted(await this.shared.read(address, this.local.windowMs));
    if (counts === undefined) return own;
    if (counts.address >= this.local.perAddress) return { scope: 'address', seconds: this.seconds(counts.addressMs) };
    if (own !== undefined) return own;
    if (counts.total >= this.local.total) return { scope: 'total', seconds: this.seconds(counts.totalMs) };
    return undefined;
  }

  async failed(address: string): Promise<void> {
    this.local.failed(address);
    if (this.shared !== undefined) this.noted(await this.shared.fail(address, this.local.windowMs, this.local.total));
  }

  async succeeded(address: string): Promise<void> {
    this.local.succeeded(address);
    await this.shared?.clear(address);
  }

  /** Whole seconds to wait, at least 1 and never past one window (whatever the store says is left). */
  private seconds(ms: number): number {
    return Math.max(1, Math.ceil(Math.min(ms, this.local.windowMs) / 1000));
  }

  private noted(counts: SharedCounts | undefined): SharedCounts | undefined {
    const sharing = counts !== undefined;
    if (sharing !== this.sharing) {
      if (!sharing)
        this.log.warn(
          "console: the sign-in limit cannot use the cluster's Redis; each worker limits sign-ins alone until it can (an address then gets its tries on every worker)",
        );
      else if (this.sharing === false) this.log.info("console: the sign-in limit is shared by the cluster's workers again");
      this.sharing = sharing;
    }
    return counts;
  }
}
