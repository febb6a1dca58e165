// Single-use forwards. A signed forward names the worker it is for (so another worker refuses it)
// and carries an id, `BOOT.SEQ`: BOOT is random per sending process, SEQ counts its forwards from
// 1. The receiving worker remembers, per sender process, the highest SEQ seen and which of the
// WINDOW before it were seen (a sliding bitmap, as IPsec's anti-replay window, RFC 4303 §3.4.3): a
// SEQ seen before, or older than the window, is refused. Memory is WINDOW bits per sender process,
// at most MAX_SENDERS of them; a sender silent for longer than twice the signature's clock window
// is forgotten, since any forward of its that could still be replayed is then refused as stale.
// A replay to another worker fails there on the signature, which names its receiver.

import { randomBytes } from 'node:crypto';
import { MAX_SKEW_MS } from './signing.js';

/** How many SEQs behind the highest one a sender's forward may arrive (forwards signed concurrently arrive out of order). */
const WINDOW = 65_536;
/** Sender processes remembered at most (a cluster has far fewer workers). */
const MAX_SENDERS = 1024;
/** A sender unheard of for this long is forgotten: its forwards are past the signature's clock window. */
const FORGET_MS = 2 * MAX_SKEW_MS;
const ID = /^([0-9a-f]{16})\.([1-9][0-9]{0,15})$/;

/** This process's forward ids. */
export class ForwardIdSource {
  private readonly boot = randomBytes(8).toString('hex');
  private seq = 0;

  next(): string {
    return `${this.boot}.${++this.seq}`;
  }
}

interface Window {
  high: number;
  seen: Uint8Array;
  last: number;
}

/** The forward ids this worker has accepted, per sender process. */
export class SeenForwards {
  private readonly senders = new Map<string, Window>();

  /** Records a (signature-checked) forward's id; why it is refused (replayed, too old, malformed), or undefined. */
  accept(from: string, id: string, now = Date.now()): string | undefined {
    const match = ID.exec(id);
    const seq = match === null ? NaN : Number(match[2]);
    if (match === null || !Number.isSafeInteger(seq)) return 'its forward id is malformed';
    const key = `${from}\0${match[1]}`;
    let w = this.senders.get(key);
    if (w === undefined) {
      this.makeRoom(now);
      w = { high: 0, seen: new Uint8Array(WINDOW / 8), last: now };
      this.senders.set(key, w);
    }
    w.last = now;
    if (seq > w.high) {
      if (seq - w.high >= WINDOW) w.seen.fill(0);
      else for (let s = w.high + 1; s < seq; s++) clear(w.seen, s);
      w.high = seq;
      set(w.seen, seq);
      return undefined;
    }
    if (seq <= w.high - WINDOW) return 'its forward id is older than the replay window';
    if (has(w.seen, seq)) return 'it was already served (a forward is single-use)';
    set(w.seen, seq);
    return undefined;
  }

  private makeRoom(now: number): void {
    if (this.senders.size < MAX_SENDERS) return;
    for (const [key, w] of this.senders) if (now - w.last > FORGET_MS) this.senders.delete(key);
    if (this.senders.size < MAX_SENDERS) return;
    let oldest: [string, number] | undefined;
    for (const [key, w] of this.senders) if (oldest === undefined || w.last < oldest[1]) oldest = [key, w.last];
    if (oldest !== undefined) this.senders.delete(oldest[0]);
  }
}

function has(bits: Uint8Array, seq: number): boolean {
  const i = seq % WINDOW;
  return ((bits[i >> 3] ?? 0) & (1 << (i & 7))) !== 0;
}

function set(bits: Uint8Array, seq: number): void {
  const i = seq % WINDOW;
  bits[i >> 3] = (bits[i >> 3] ?? 0) | (1 << (i & 7));
}

function clear(bits: Uint8Array, seq: number): void {
  const i = seq % WINDOW;
  bits[i >> 3] = (bits[i >> 3] ?? 0) & ~(1 << (i & 7));
}
