// Finding what a set of detectors matches in one text, and replacing it by a marker. The scanner is
// compiled once per guard plan: one case-insensitive prefilter made of every detector's hints is the
// only work on clean text (one native RegExp scan, no allocation); only a text it matches is searched
// detector by detector, and only by the detectors whose hint it holds.

import type { Detector } from './detector.js';
import { hintPattern } from './hint-pattern.js';

/** What a rule does with what a detector found: removed (`redact`), the message refused (`block`), or only recorded (`audit`). */
export type GuardAction = 'redact' | 'block' | 'audit';

/** One detector at work, with what is done with its matches. */
export interface ArmedDetector {
  readonly detector: Detector;
  readonly action: GuardAction;
}

/** One match in a text: the characters [start, end) are what the detector found. */
interface Span {
  readonly start: number;
  readonly end: number;
  readonly armed: ArmedDetector;
}

/** No detector finds anything in a text shorter than this. */
export const SHORTEST_FIND = 8;

/** The marker that takes the place of a removed value: it says what was there, never what it was. */
function marker(detector: Detector): string {
  return `[redacted: ${detector.label}]`;
}

export class TextScanner {
  /** Undefined: some detector has no hint, so every text is searched. */
  private readonly prefilter: RegExp | undefined;
  private readonly hinted: readonly { readonly armed: ArmedDetector; readonly hints: readonly string[] }[];

  /** No detector is armed: nothing is looked for. */
  readonly empty: boolean;

  constructor(readonly armed: readonly ArmedDetector[]) {
    this.empty = armed.length === 0;
    const hints = armed.flatMap((a) => a.detector.hints);
    const everyText = armed.some((a) => a.detector.hints.length === 0);
    this.prefilter = everyText ? undefined : hintPattern(hints);
    this.hinted = armed.map((a) => ({ armed: a, hints: a.detector.hints.map((h) => h.toLowerCase()) }));
  }

  /** The matches in `text`, in order and not overlapping (the earlier, then the longer, wins); undefined when none. */
  scan(text: string): Span[] | undefined {
    if (this.empty || text.length < SHORTEST_FIND) return undefined;
    if (this.prefilter !== undefined && !this.prefilter.test(text)) return undefined;
    let lower: string | undefined;
    let spans: Span[] | undefined;
    for (const { armed, hints } of this.hinted) {
      if (hints.length > 0) {
        lower ??= text.toLowerCase();
        if (!hints.some((hint) => lower!.includes(hint))) continue;
      }
      const pattern = armed.detector.pattern;
      pattern.lastIndex = 0;
      for (let found = pattern.exec(text); found !== null; found = pattern.exec(text)) {
        if (found[0].length === 0) {
          pattern.lastIndex++;
          continue;
        }
        const span = spanOf(found, armed);
        if (span !== undefined) (spans ??= []).push(span);
      }
    }
    return spans === undefined ? undefined : disjoint(spans);
  }
}

/** The part of a match that is the secret (its `secret` or `bare` group, else the whole), if it is valid. */
function spanOf(found: RegExpExecArray, armed: ArmedDetector): Span | undefined {
  const groups = found.indices?.groups;
  const range = groups?.secret ?? groups?.bare ?? found.indices?.[0];
  if (range === undefined) return undefined;
  const [start, end] = range;
  const valid = armed.detector.valid;
  if (valid !== undefined && !valid(found.input.slice(start, end))) return undefined;
  return { start, end, armed };
}

function disjoint(spans: Span[]): Span[] {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Span[] = [];
  let until = -1;
  for (const span of spans) {
    if (span.start < until) continue;
    kept.push(span);
    until = span.end;
  }
  return kept;
}

/** `text` with the spans `which` names replaced by their markers: `redact` ones, also `block` ones, or all. */
export function redactSpans(text: string, spans: readonly Span[], which: 'redact' | 'redact-and-block' | 'all'): string {
  let out = '';
  let from = 0;
  for (const span of spans) {
    const action = span.armed.action;
    if (which !== 'all' && action !== 'redact' && !(which === 'redact-and-block' && action === 'block')) continue;
    out += text.slice(from, span.start) + marker(span.armed.detector);
    from = span.end;
  }
  return from === 0 ? text : out + text.slice(from);
}
