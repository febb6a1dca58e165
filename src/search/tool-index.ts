// The lexical index of the tools an agent may search: BM25F over the fields of tool-fields.ts, with
// coordination (a tool's score scaled by the share of the query's words it matched) and an action
// bonus (a tool whose action the task leads with scores more, actions.ts). `search(query, limit,
// allow)` asks `allow` only for a tool that would enter the result, before it takes a place there.
// Postings are parallel typed arrays per term, so upsert and remove cost what one document has, not
// what the index holds. The arithmetic, the storage and where the defaults come from:
// src/search/README.md, "The index".

import { FIELDS, fieldTerms } from './tool-fields.js';
import type { FieldWeights, SearchDoc } from './tool-fields.js';
import { nameAction, taskActions } from './actions.js';
import { synonymsOf } from './synonyms.js';
import { terms } from './words.js';

export type { FieldWeights, SearchDoc } from './tool-fields.js';

export interface SearchHit {
  key: string;
  score: number;
}

export interface ToolIndexOptions {
  /** Per-field weights; a field left out keeps its default. A weight of 0 ignores the field. */
  weights?: Partial<FieldWeights>;
  /** BM25's term-frequency saturation (default DEFAULT_K1). */
  k1?: number;
  /** BM25's length normalization, one value for every field, 0 (none) to 1 (full). */
  b?: number;
  /** Weight of a query word's synonyms against the word itself (0 turns synonyms off). */
  synonymWeight?: number;
  /**
   * Coordination: a tool's score times (share of the query's words it matches) to this power; 0 turns
   * it off. Rewards a tool that answers several words of a task over one that matches one word often.
   */
  coord?: number;
  /**
   * A tool whose action (the first verb of its name: actions.ts) is one the query asks for, in any of
   * its everyday words, scores this share more (0.2: one fifth more); 0 turns it off.
   */
  actionBonus?: number;
}

export const DEFAULT_WEIGHTS: Readonly<FieldWeights> = Object.freeze({
  name: 3,
  title: 2,
  summary: 0.1,
  description: 0.25,
  paramNames: 0,
  paramDescriptions: 0.25,
  server: 1,
  instructions: 0,
});
export const DEFAULT_K1 = 2;
export const DEFAULT_B = 0.75;
export const DEFAULT_SYNONYM_WEIGHT = 0.5;
export const DEFAULT_COORD = 0.25;
export const DEFAULT_ACTION_BONUS = 0.2;

/**
 * Most of a query's distinct words searched: beyond them, the ones with the highest IDF (`informative`),
 * so a long query costs what a 31-word one does, plus reading its text (bounded by words.ts MAX_TEXT).
 */
const MAX_QUERY_TERMS = 31;
/** Most terms a query reaches with its synonyms: each is one walk of a postings list. */
const MAX_EXPANDED_TERMS = 128;
/** Distinct query words counted for coverage (bits of the per-tool stamp). */
const MAX_CONCEPTS = MAX_QUERY_TERMS;
/** A file name in a query ("package.json", "main.py"): the user means a file. */
const FILE_NAME = /[\p{L}\p{N}_*-]\.(?!(?:com|org|net|io|dev|ai|app|co)\b)[a-z][a-z0-9]{0,4}\b/iu;
const FILE_TERM = 'file';
/** Most hits one search returns. */
const MAX_LIMIT = 1_000;

const F = FIELDS.length;
const NAME = FIELDS.indexOf('name');
/** Per-field counts are kept in a byte: beyond 255 occurrences a term says nothing more. */
const MAX_TF = 255;

/** The documents that hold one term, with the term's count in each of their fields. */
class Postings {
  n = 0;
  docs = new Int32Array(4);
  /** For each posting, the index of this term in its document's term list (to update on a move). */
  back = new Int32Array(4);
  tf = new Uint8Array(4 * F);
  /**
   * Each posting's weighted, length-normalized term frequency (BM25F's pseudo-frequency), cached for
   * the index's `version`: any upsert or remove changes the average lengths and so every value; the
   * first search after one recomputes what it reads, and later searches read one number a posting.
   */
  weighted = new Float32Array(0);
  version = -1;

  add(doc: number, back: number, counts: Uint8Array): number {
    if (this.n === this.docs.length) {
      const docs = new Int32Array(this.n * 2);
      docs.set(this.docs);
      this.docs = docs;
      const b = new Int32Array(this.n * 2);
      b.set(this.back);
      this.back = b;
      const tf = new Uint8Array(this.n * 2 * F);
      tf.set(this.tf);
      this.tf = tf;
    }
    const at = this.n++;
    this.docs[at] = doc;
    this.back[at] = back;
    this.tf.set(counts, at * F);
    return at;
  }
}

/** What the index keeps of one document: its key, its terms and where it sits in each term's postings. */
interface Slot {
  key: string;
  terms: Postings[];
  termNames: string[];
  at: Int32Array;
}

export class ToolIndex {
  private readonly weights: Float64Array;
  private readonly k1: number;
  private readonly b: number;
  private readonly synonymWeight: number;
  private readonly coord: number;
  private readonly actionBonus: number;
  private readonly postings = new Map<string, Postings>();
  private readonly slotOf = new Map<string, number>();
  private slots: (Slot | undefined)[] = [];
  private readonly free: number[] = [];
  private lengths = new Float64Array(0);
  private readonly lengthSums = new Float64Array(F);
  private count = 0;
  /** Changes with every upsert and remove: what the postings' cached pseudo-frequencies were computed for. */
  private version = 0;
  // Scratch space of search(), kept between calls and cleared by what each call touched.
  private scores = new Float64Array(0);
  private touched = new Int32Array(0);
  private coverage = new Float64Array(0);
  private stamp = new Int32Array(0);
  /** Each document's action classes (actions.ts), a bit mask. */
  private actions = new Int32Array(0);

  constructor(options: ToolIndexOptions = {}) {
    const weights = { ...DEFAULT_WEIGHTS, ...options.weights };
    this.weights = new Float64Array(
      FIELDS.map((field) => {
        const weight = weights[field];
        if (!Number.isFinite(weight) || weight < 0)
          throw new RangeError(`search weight ${field} must be a finite number ≥ 0, got ${String(weight)}`);
        return weight;
      }),
    );
    this.k1 = checked('k1', options.k1 ?? DEFAULT_K1, 0, 100);
    this.b = checked('b', options.b ?? DEFAULT_B, 0, 1);
    this.synonymWeight = checked('synonymWeight', options.synonymWeight ?? DEFAULT_SYNONYM_WEIGHT, 0, 1);
    this.coord = checked('coord', options.coord ?? DEFAULT_COORD, 0, 4);
    this.actionBonus = checked('actionBonus', options.actionBonus ?? DEFAULT_ACTION_BONUS, 0, 4);
  }

  get size(): number {
    return this.count;
  }

  has(key: string): boolean {
    return this.slotOf.has(key);
  }

  /** Adds a tool, or replaces the one with the same key. */
  upsert(doc: SearchDoc): void {
    this.remove(doc.key);
    const fields = fieldTerms(doc);
    const id = this.free.pop() ?? this.grow();
    const counts = new Map<string, Uint8Array>();
    for (let f = 0; f < F; f++) {
      const list = fields[f]!;
      this.lengths[id * F + f] = list.length;
      this.lengthSums[f] = this.lengthSums[f]! + list.length;
      for (const term of list) {
        let c = counts.get(term);
        if (c === undefined) {
          c = new Uint8Array(F);
          counts.set(term, c);
        }
        if (c[f]! < MAX_TF) c[f]!++;
      }
    }
    const slot: Slot = { key: doc.key, terms: [], termNames: [], at: new Int32Array(counts.size) };
    for (const [term, c] of counts) {
      let postings = this.postings.get(term);
      if (postings === undefined) {
        postings = new Postings();
        this.postings.set(term, postings);
      }
      const back = slot.terms.length;
      slot.at[back] = postings.add(id, back, c);
      slot.terms.push(postings);
      slot.termNames.push(term);
    }
    this.slots[id] = slot;
    this.actions[id] = nameAction(fields[NAME]!);
    this.slotOf.set(doc.key, id);
    this.count++;
    this.version++;
  }

  remove(key: string): void {
    const id = this.slotOf.get(key);
    if (id === undefined) return;
    const slot = this.slots[id]!;
    for (let i = 0; i < slot.terms.length; i++) {
      const postings = slot.terms[i]!;
      const at = slot.at[i]!;
      const last = --postings.n;
      if (at !== last) {
        // The last posting moves into the hole; its document learns its new place.
        const moved = postings.docs[last]!;
        const back = postings.back[last]!;
        postings.docs[at] = moved;
        postings.back[at] = back;
        postings.tf.copyWithin(at * F, last * F, last * F + F);
        this.slots[moved]!.at[back] = at;
      }
      if (postings.n === 0) this.postings.delete(slot.termNames[i]!);
    }
    for (let f = 0; f < F; f++) {
      this.lengthSums[f] = this.lengthSums[f]! - this.lengths[id * F + f]!;
      this.lengths[id * F + f] = 0;
    }
    this.slots[id] = undefined;
    this.actions[id] = 0;
    this.free.push(id);
    this.slotOf.delete(key);
    this.count--;
    this.version++;
  }

  /**
   * The best `limit` tools for a query, best first. `allow` is asked before a tool takes a place in
   * the result, so a tool it refuses never pushes out one it would have allowed.
   */
  search(query: string, limit: number, allow?: (key: string) => boolean): SearchHit[] {
    const k = Math.min(Math.max(0, Math.floor(Number.isFinite(limit) ? limit : 0)), MAX_LIMIT);
    if (k === 0 || this.count === 0) return [];
    const { weighted, concepts, actions } = this.queryTerms(query);
    if (weighted.size === 0) return [];
    const n = this.count;
    const avg = new Float64Array(F);
    for (let f = 0; f < F; f++) avg[f] = this.lengthSums[f]! / n || 1;
    const { scores, touched, coverage, stamp, k1 } = this;
    let nTouched = 0;
    for (const [term, { weight: queryWeight, concept }] of weighted) {
      const postings = this.postings.get(term);
      if (postings === undefined) continue;
      const df = postings.n;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      if (postings.version !== this.version) this.weigh(postings, avg);
      const { docs } = postings;
      const pseudo = postings.weighted;
      for (let i = 0; i < df; i++) {
        const doc = docs[i]!;
        const x = pseudo[i]!;
        if (x === 0) continue;
        if (scores[doc] === 0) touched[nTouched++] = doc;
        scores[doc] = scores[doc]! + (queryWeight * idf * x) / (k1 + x);
        // Each of the query's words counts once towards coverage, by its own term or a synonym
        // (its own term comes first in `weighted`, so a later synonym of a covered word adds nothing).
        if ((stamp[doc]! & (1 << concept)) === 0) {
          stamp[doc] = stamp[doc]! | (1 << concept);
          coverage[doc] = coverage[doc]! + queryWeight;
        }
      }
    }
    if (this.coord > 0 && concepts > 1) {
      for (let i = 0; i < nTouched; i++) {
        const doc = touched[i]!;
        scores[doc] = scores[doc]! * Math.pow(coverage[doc]! / concepts, this.coord);
      }
    }
    if (this.actionBonus > 0 && actions !== 0) {
      const bonus = 1 + this.actionBonus;
      for (let i = 0; i < nTouched; i++) {
        const doc = touched[i]!;
        if ((this.actions[doc]! & actions) !== 0) scores[doc] = scores[doc]! * bonus;
      }
    }
    const hits = this.best(k, nTouched, allow);
    for (let i = 0; i < nTouched; i++) {
      const doc = touched[i]!;
      scores[doc] = 0;
      coverage[doc] = 0;
      stamp[doc] = 0;
    }
    return hits;
  }

  /**
   * The query's terms with their weights and the query word ("concept") each stands for: its own words
   * at 1, their synonyms at synonymWeight (a term both keeps the larger), a file name ("main.py")
   * also as the word "file". At most 31 concepts, the width of the coverage stamp.
   */
  private queryTerms(query: string): { weighted: Map<string, { weight: number; concept: number }>; concepts: number; actions: number } {
    const weighted = new Map<string, { weight: number; concept: number }>();
    const own = this.informative([...new Set(terms(query))], MAX_CONCEPTS);
    if (own.length < MAX_CONCEPTS && FILE_NAME.test(query) && !own.includes(FILE_TERM)) own.push(FILE_TERM);
    own.forEach((term, concept) => weighted.set(term, { weight: 1, concept }));
    if (this.synonymWeight > 0) {
      own.forEach((term, concept) => {
        for (const synonym of synonymsOf(term)) {
          for (const part of synonym) {
            if (!weighted.has(part) && weighted.size < MAX_EXPANDED_TERMS) weighted.set(part, { weight: this.synonymWeight, concept });
          }
        }
      });
    }
    return { weighted, concepts: own.length, actions: this.actionBonus > 0 ? taskActions(query) : 0 };
  }

  /**
   * A term's inverse document frequency in this index (BM25's, always > 0), or 0 for a term no tool
   * has: how much finding it says about a tool.
   */
  idf(term: string): number {
    const df = this.postings.get(term)?.n ?? 0;
    return df === 0 ? 0 : Math.log(1 + (this.count - df + 0.5) / (df + 0.5));
  }

  /**
   * At most `max` of a query's distinct terms, in their order: all of them when they are few; else the
   * ones the index holds with the highest IDF. A term no tool has scores nothing and only scales every
   * tool's coordination alike, so dropping it changes no ranking; among the rest, the rarest terms say
   * most about which tool is meant, and a long task or pasted context keeps those instead of its first words.
   */
  private informative(own: readonly string[], max: number): string[] {
    if (own.length <= max) return [...own];
    const held = own.filter((term) => this.postings.has(term));
    if (held.length <= max) return held;
    const chosen = new Set(
      held
        .map((term, at) => ({ term, at, idf: this.idf(term) }))
        .sort((x, y) => y.idf - x.idf || x.at - y.at)
        .slice(0, max)
        .map((x) => x.term),
    );
    return held.filter((term) => chosen.has(term));
  }

  /** Fills a term's cache of pseudo-frequencies for the current lengths. */
  private weigh(postings: Postings, avg: Float64Array): void {
    const { weights, lengths, b } = this;
    if (postings.weighted.length < postings.n) postings.weighted = new Float32Array(postings.docs.length);
    const { docs, tf, weighted } = postings;
    for (let i = 0; i < postings.n; i++) {
      const doc = docs[i]!;
      let x = 0;
      for (let f = 0; f < F; f++) {
        const t = tf[i * F + f]!;
        if (t === 0) continue;
        x += (weights[f]! * t) / (1 - b + (b * lengths[doc * F + f]!) / avg[f]!);
      }
      weighted[i] = x;
    }
    postings.version = this.version;
  }

  /** The k best touched documents that `allow` accepts, by a small sorted insertion (k is small). */
  private best(k: number, nTouched: number, allow: ((key: string) => boolean) | undefined): SearchHit[] {
    const hits: SearchHit[] = [];
    for (let i = 0; i < nTouched; i++) {
      const doc = this.touched[i]!;
      const score = this.scores[doc]!;
      const slot = this.slots[doc]!;
      if (hits.length === k && !beats(score, slot.key, hits[k - 1]!)) continue;
      if (allow !== undefined && !allow(slot.key)) continue;
      let at = hits.length === k ? k - 1 : hits.length;
      if (hits.length < k) hits.push({ key: slot.key, score });
      while (at > 0 && beats(score, slot.key, hits[at - 1]!)) {
        hits[at] = hits[at - 1]!;
        at--;
      }
      hits[at] = { key: slot.key, score };
    }
    return hits;
  }

  /** A new slot at the end, growing the per-slot arrays by doubling. */
  private grow(): number {
    const id = this.slots.length;
    this.slots.push(undefined);
    if (this.scores.length <= id) {
      const capacity = Math.max(64, this.scores.length * 2);
      const lengths = new Float64Array(capacity * F);
      lengths.set(this.lengths);
      this.lengths = lengths;
      this.scores = new Float64Array(capacity);
      this.touched = new Int32Array(capacity);
      this.coverage = new Float64Array(capacity);
      this.stamp = new Int32Array(capacity);
      const actions = new Int32Array(capacity);
      actions.set(this.actions);
      this.actions = actions;
    }
    return id;
  }
}

/** Higher score first; equal scores by key, so results do not depend on insertion order. */
function beats(score: number, key: string, hit: SearchHit): boolean {
  return score > hit.score || (score === hit.score && key < hit.key);
}

function checked(name: string, value: number, min: number, max: number): number {
  if (!Number.isFinite(value) || value < min || value > max)
    throw new RangeError(`search ${name} must be a number in [${min}, ${max}], got ${String(value)}`);
  return value;
}
