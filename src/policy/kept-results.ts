// Results over their cap, kept whole for the agent that got their head: `mcpgate://results/ID`,
// read with resources/read page by page (`?page=N`, from 1), the pages' texts joined being the
// result's JSON exactly as the agent would have got it uncut. Only the agent the result was made
// for can read it (another agent gets "not found", the same as for an expired or unknown id); ids
// are random and unguessable. Bounded: each result expires after the rules' `keepResults.seconds`,
// and the oldest are dropped while all together pass `keepResults.maxBytes`.

import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { KeepBounds } from '../guards/guard-plan.js';

/** The URI prefix of a kept result. */
export const KEPT_RESULTS_URI = 'mcpgate://results/';

interface Kept {
  readonly agent: string;
  readonly pages: readonly string[];
  readonly bytes: number;
  readonly expires: number;
}

/** What `keep` tells the cap's note: the result's URI, its pages, and for how long it is kept. */
export interface KeptReceipt {
  readonly uri: string;
  readonly pages: number;
  readonly seconds: number;
}

export class KeptResults {
  /** By id, in the order they were kept (the oldest first: what is dropped first). */
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  /** Keeps `json` for `agent` in pages of at most `pageBytes` UTF-8 bytes; undefined when it alone passes the bound. */
  keep(agent: string, json: string, pageBytes: number, bounds: KeepBounds): KeptReceipt | undefined {
    const now = this.clock();
    this.expire(now);
    const encoded = Buffer.from(json, 'utf8');
    if (encoded.length > bounds.maxBytes) return undefined;
    while (this.bytes + encoded.length > bounds.maxBytes) this.dropOldest();
    const id = randomBytes(16).toString('base64url');
    const pages = pagesOf(encoded, pageBytes);
    this.kept.set(id, { agent, pages, bytes: encoded.length, expires: now + bounds.seconds * 1000 });
    this.bytes += encoded.length;
    return { uri: `${KEPT_RESULTS_URI}${id}`, pages: pages.length, seconds: bounds.seconds };
  }

  /** The resources/read answer for `uri` asked by `agent`: one page, or not found (unknown, expired, another agent's). */
  read(agent: string, uri: string): Record<string, unknown> | GatewayError {
    this.expire(this.clock());
    const rest = uri.slice(KEPT_RESULTS_URI.length);
    const [id = '', query] = rest.split('?', 2);
    const page = query === undefined ? 1 : /^page=([1-9][0-9]{0,8})$/.exec(query)?.[1];
    const entry = this.kept.get(id);
    const notFound = new GatewayError('MCPG_RESOURCE_NOT_FOUND', `no kept result ${uri} (unknown, expired, or another agent's)`, {
      detail: { uri },
    });
    if (entry === undefined || entry.agent !== agent || page === undefined) return notFound;
    const n = Number(page);
    const text = entry.pages[n - 1];
    if (text === undefined) return notFound;
    const base = `${KEPT_RESULTS_URI}${id}`;
    return {
      contents: [{ uri: `${base}?page=${n}`, mimeType: 'application/json', text }],
      _meta: {
        'mcpgate/page': n,
        'mcpgate/pages': entry.pages.length,
        ...(n < entry.pages.length && { 'mcpgate/next': `${base}?page=${n + 1}` }),
      },
    };
  }

  /** Bytes kept now (for status and the tests). */
  get size(): number {
    return this.bytes;
  }

  private expire(now: number): void {
    for (const [id, entry] of this.kept) {
      if (entry.expires > now) continue;
      this.kept.delete(id);
      this.bytes -= entry.bytes;
    }
  }

  private dropOldest(): void {
    const first = this.kept.entries().next();
    if (first.done === true) return;
    const [id, entry] = first.value;
    this.kept.delete(id);
    this.bytes -= entry.bytes;
  }
}

/**
 * `encoded` cut in pages of at most `pageBytes` bytes, each cut before a UTF-8 continuation byte, so
 * every page decodes to whole characters and the pages joined are the text exactly.
 */
function pagesOf(encoded: Buffer, pageBytes: number): string[] {
  const pages: string[] = [];
  let from = 0;
  while (from < encoded.length) {
    let to = Math.min(from + pageBytes, encoded.length);
    while (to < encoded.length && to > from + 1 && (encoded[to]! & 0xc0) === 0x80) to--;
    pages.push(encoded.toString('utf8', from, to));
    from = to;
  }
  return pages;
}
