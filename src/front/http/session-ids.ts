// Agent session ids. A session opened by one of `serve --workers N`'s workers names that worker's
// slot (0 … N-1) in front of its random part — `w3.` and a UUID — so the primary, which owns the
// shared port, can hand a connection whose first request names a session to the worker that opened
// it (cli/handoff.ts) without asking Redis. The slot is no secret and adds no guessability: the
// random part is the whole of a plain gateway's id. A session adopted by another worker keeps its
// id: its connections then reach the slot's worker, which forwards them (correct, one hop slower).

import { randomUUID } from 'node:crypto';

/** The most slots a session id may name (`--workers` is bounded well below this). */
const MAX_SLOT = 999;
const SLOTTED = /^w(\d{1,3})\./;

/** A new session id; `slot`: the opening worker's slot under `--workers N`. */
export function mintSessionId(slot?: number): string {
  return slot === undefined ? randomUUID() : `w${slot}.${randomUUID()}`;
}

/** The slot a session id names, if it names one. */
export function slotOfSessionId(id: string): number | undefined {
  const m = SLOTTED.exec(id);
  if (m === null) return undefined;
  const slot = Number(m[1]);
  return slot <= MAX_SLOT ? slot : undefined;
}
