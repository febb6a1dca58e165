// Search for a task that has several steps ("find the papers on X, summarise them and post the summary
// to the team channel"): one ranking of the whole text would let the step with the rarest words take
// every place, so the text is cut into its steps (sentences, clauses, list items, "and then"), each step
// is searched on its own, and the rankings are merged by reciprocal rank (fuse.ts's arithmetic, with the
// whole text as one more ranking): each step's best tool comes in near the top before any step's
// second best, so one step's tools do not crowd out the others'. A text of one step is one search.
// Bounds: the text is read to MAX_TASK_CHARS; at most MAX_STEPS steps are searched (the ones whose
// words say most: the sum of their terms' IDF in the index), so a pasted page costs what a
// MAX_STEPS-step task does, plus reading it once.

import type { SearchHit, ToolIndex } from './tool-index.js';
import { MAX_TEXT, terms } from './words.js';

/** Characters of a task read: a longer text is cut there (the gateway need refuse nothing shorter). */
export const MAX_TASK_CHARS = 20_000;
/** Most steps searched on their own, besides the whole text. */
const MAX_STEPS = 8;

interface TaskSearchOptions {
  /** The rank constant of the fusion: small values favour each ranking's first places (default 2). */
  k?: number;
  /** Weight of the whole text's ranking against each step's (default 1). */
  wholeWeight?: number;
  /** Most steps searched (default MAX_STEPS). */
  maxSteps?: number;
}

const DEFAULT_TASK_K = 2;
const DEFAULT_WHOLE_WEIGHT = 1;

// Where one step of a task ends and the next begins: the end of a sentence or a line, a semicolon or
// colon, a comma, a list's number or bullet, and the words that chain steps ("and", "then", "after
// that", "finally"…). A piece with no term the index holds is no step (a path, "please").
const BOUNDARY =
  /(?:^|\s)(?:\d{1,2}[.)]|[-*•])\s|[.!?;:]+(?=\s|$)|\n+|,|\s(?:and\s+then|and\s+also|and|then|after\s+that|afterwards|finally|next|also|as\s+well\s+as|before|after|once|plus)\s/giu;

/** The steps of a task, each the piece of its text, in the task's order. */
function taskSteps(index: ToolIndex, text: string, maxSteps = MAX_STEPS): string[] {
  const input = text.length > MAX_TASK_CHARS ? text.slice(0, MAX_TASK_CHARS) : text;
  const steps: { text: string; at: number; weight: number }[] = [];
  const seen = new Set<string>();
  for (const piece of input.split(BOUNDARY)) {
    const held = terms(piece).filter((term) => index.idf(term) > 0);
    if (held.length === 0) continue;
    const key = held.join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    steps.push({ text: piece.trim(), at: steps.length, weight: [...new Set(held)].reduce((sum, term) => sum + index.idf(term), 0) });
  }
  if (steps.length <= maxSteps) return steps.map((step) => step.text);
  return steps
    .sort((x, y) => y.weight - x.weight || x.at - y.at)
    .slice(0, maxSteps)
    .sort((x, y) => x.at - y.at)
    .map((step) => step.text);
}

/**
 * The best `limit` tools for a task, best first: its whole text and each of its steps searched, the
 * rankings fused. `allow` is asked as ToolIndex.search asks it. A task of one step is exactly
 * `index.search(text, limit, allow)` (a text longer than one search reads: its step's).
 */
export function searchTask(
  index: ToolIndex,
  text: string,
  limit: number,
  allow?: (key: string) => boolean,
  options: TaskSearchOptions = {},
): SearchHit[] {
  const input = text.length > MAX_TASK_CHARS ? text.slice(0, MAX_TASK_CHARS) : text;
  const steps = taskSteps(index, input, options.maxSteps ?? MAX_STEPS);
  // A text past what one search reads (words.ts MAX_TEXT) is searched by its step, wherever it lies.
  if (steps.length <= 1) return index.search(steps.length === 1 && input.length > MAX_TEXT ? steps[0]! : input, limit, allow);
  const k = options.k ?? DEFAULT_TASK_K;
  const wholeWeight = options.wholeWeight ?? DEFAULT_WHOLE_WEIGHT;
  const depth = Math.max(limit, 10);
  const scores = new Map<string, number>();
  const add = (hits: readonly SearchHit[], weight: number): void =>
    hits.forEach((hit, rank) => scores.set(hit.key, (scores.get(hit.key) ?? 0) + weight / (k + rank + 1)));
  if (wholeWeight > 0) add(index.search(input, depth, allow), wholeWeight);
  for (const step of steps) add(index.search(step, depth, allow), 1);
  return [...scores]
    .map(([key, score]) => ({ key, score }))
    .sort((x, y) => y.score - x.score || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
    .slice(0, Math.max(0, Math.floor(limit)));
}
