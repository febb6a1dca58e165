// Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): two rankings of the same tools
// (lexical and by embedding) merged by the sum of 1 / (k + rank). It uses ranks, not scores, so BM25's
// unbounded scores and cosine similarities need no calibration against each other; k = 60 is the
// paper's value, which damps the weight of the very first ranks.
// `fuse(lexical, vector)` is search mode's hybrid ranking (gateway/modes/hybrid-ranking.ts).

import type { SearchHit } from './tool-index.js';

const DEFAULT_FUSION_K = 60;

interface FuseOptions {
  /** The rank constant (default 60). */
  k?: number;
  /** Most hits returned (default: all). */
  limit?: number;
  /** Weight of the vector ranking against the lexical one (default 1: equal). */
  vectorWeight?: number;
}

/** The two rankings (each best first) as one, best first; a tool in only one ranking still counts. */
export function fuse(lexical: readonly SearchHit[], vector: readonly SearchHit[], options: FuseOptions = {}): SearchHit[] {
  const k = options.k ?? DEFAULT_FUSION_K;
  const vectorWeight = options.vectorWeight ?? 1;
  if (!(k >= 0) || !Number.isFinite(k)) throw new RangeError(`fusion k must be a finite number ≥ 0, got ${String(k)}`);
  if (!(vectorWeight >= 0) || !Number.isFinite(vectorWeight))
    throw new RangeError(`fusion vectorWeight must be a finite number ≥ 0, got ${String(vectorWeight)}`);
  const scores = new Map<string, number>();
  const add = (hits: readonly SearchHit[], weight: number): void => {
    const seen = new Set<string>();
    hits.forEach((hit, rank) => {
      if (seen.has(hit.key)) return;
      seen.add(hit.key);
      scores.set(hit.key, (scores.get(hit.key) ?? 0) + weight / (k + rank + 1));
    });
  };
  add(lexical, 1);
  add(vector, vectorWeight);
  const fused = [...scores].map(([key, score]) => ({ key, score }));
  fused.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return options.limit === undefined ? fused : fused.slice(0, Math.max(0, options.limit));
}
