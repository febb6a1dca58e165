// Screening one message's values: every string inside (an argument, a text content, a resource's
// text, structuredContent at any depth, an error's message and data) is searched with one scanner;
// what a `redact` detector found is replaced in place of the value by its marker, what a `block` one
// found refuses the whole message. Binary contents (an image's or audio's `data`, a resource's `blob`)
// and `_meta` are not text for the agent and are left as they are. What was found is reported by
// detector and place, never by value. A server's answer is also read for signs of prompt injection
// (injection.ts) in the same walk, each text as the agent will get it, within a bound per message.

import { injectionSigns, SHORTEST_SIGN, type InjectionSign } from './injection.js';
import { redactSpans, SHORTEST_FIND, type GuardAction, type TextScanner } from './text-scan.js';

/** One thing found: which detector, where (a JSON path), and what was done. */
export interface Finding {
  readonly detector: string;
  readonly label: string;
  readonly kind: 'secret' | 'pii';
  readonly action: GuardAction;
  readonly at: string;
}

/** A string shorter than this (a content block's type, an id, an enum's value) holds nothing either search finds: it is not looked at. */
const SHORTEST = Math.min(SHORTEST_FIND, SHORTEST_SIGN);

/** Findings past this many are counted, not listed. */
const MAX_LISTED = 32;

/** At most this many characters of one message's text are read for signs of injection. */
const MAX_INJECTION_SCAN = 64 * 1024;

export class Findings {
  readonly list: Finding[] = [];
  count = 0;
  blocked = false;
  redacted = 0;
  /** The signs of injection in the message, each heuristic once (a walk that looks for them; else none). */
  signs: InjectionSign[] | undefined;

  add(finding: Finding): void {
    this.count++;
    if (finding.action === 'block') this.blocked = true;
    if (finding.action === 'redact') this.redacted++;
    if (this.list.length < MAX_LISTED) this.list.push(finding);
  }

  /** The distinct labels found (for a message to the agent: never the values). */
  labels(): string[] {
    return [...new Set(this.list.map((f) => f.label))];
  }
}

/**
 * How a value is screened: edited in place (an answer mcpgate owns) or copied along changed paths;
 * which finds are replaced by their marker: those of `redact` detectors, also `block` ones (an
 * error, which cannot be refused), or every find (a copy for the audit trail, which never holds one).
 */
export interface ScreenMode {
  readonly inPlace: boolean;
  readonly redact: 'redact' | 'redact-and-block' | 'all';
  /** Each text, once screened, is also read for signs of injection (`Findings.signs`). */
  readonly injection?: boolean;
}

/** `value` screened: the same value when nothing was redacted, else (unless in place) a copy along the changed paths. */
export function screenValue(value: unknown, scanner: TextScanner, at: string, found: Findings, mode: ScreenMode): unknown {
  return screenAt(value, scanner, { root: at, keys: [], unread: mode.injection === true ? MAX_INJECTION_SCAN : 0 }, found, mode);
}

/**
 * Where the walk is: the keys from `root` down, pushed and popped as it goes, and made into a path's
 * text only for a find (nothing is built for the strings where nothing is found, nearly all of them);
 * and how many characters may still be read for signs of injection.
 */
interface Place {
  readonly root: string;
  readonly keys: (string | number)[];
  unread: number;
}

function screenAt(value: unknown, scanner: TextScanner, place: Place, found: Findings, mode: ScreenMode): unknown {
  if (typeof value === 'string') {
    if (value.length < SHORTEST) return value;
    const text = screenText(value, scanner, place, found, mode.redact);
    if (place.unread > 0) lookForInjection(text, place, found);
    return text;
  }
  const inPlace = mode.inPlace;
  if (typeof value !== 'object' || value === null) return value;
  const { keys } = place;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      keys.push(i);
      const screened = screenAt(item, scanner, place, found, mode);
      keys.pop();
      if (screened === item) continue;
      if (inPlace) value[i] = screened;
      else (copy ??= value.slice())[i] = screened;
    }
    return copy ?? value;
  }
  const record = value as Record<string, unknown>;
  const binary = record.type === 'image' || record.type === 'audio';
  let copy: Record<string, unknown> | undefined;
  for (const key in record) {
    if (key === '_meta' || key === 'blob' || (binary && key === 'data')) continue;
    const item = record[key];
    keys.push(key);
    const screened = screenAt(item, scanner, place, found, mode);
    keys.pop();
    if (screened === item) continue;
    if (inPlace) record[key] = screened;
    else (copy ??= { ...record })[key] = screened;
  }
  return copy ?? value;
}

/** The JSON path of a place: `a.b[2].c`, `$` for the root itself. */
function pathOf(place: Place): string {
  let at = place.root;
  for (const key of place.keys) at = typeof key === 'number' ? `${at}[${key}]` : at === '' ? key : `${at}.${key}`;
  return at === '' ? '$' : at;
}

function screenText(text: string, scanner: TextScanner, place: Place, found: Findings, redact: ScreenMode['redact']): string {
  const spans = scanner.scan(text);
  if (spans === undefined) return text;
  const at = pathOf(place);
  for (const span of spans) {
    const { detector, action } = span.armed;
    found.add({ detector: detector.id, label: detector.label, kind: detector.kind, action, at });
  }
  return redactSpans(text, spans, redact);
}

/** The signs of injection in one text (its first characters, while the message's bound lasts), added to `found`. */
function lookForInjection(text: string, place: Place, found: Findings): void {
  const read = text.length > place.unread ? text.slice(0, place.unread) : text;
  place.unread -= read.length;
  for (const sign of injectionSigns(read)) {
    const signs = (found.signs ??= []);
    if (!signs.some((s) => s.id === sign.id)) signs.push(sign);
  }
}
