// Retrieval quality of tool search on bench/data: the sets (the project's own: real tools of published
// MCP servers and queries written by hand; LiveMCPBench's, published by others), the measures
// (Recall@k, nDCG@5, MRR), the baselines (plain BM25 over name + description, and over every field the
// tool index weighs) and the search of the parameters on the tuning splits.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ToolIndex, type FieldWeights, type SearchDoc, type SearchHit, type ToolIndexOptions } from '../src/search/tool-index.js';
import { FIELDS, schemaParameters } from '../src/search/tool-fields.js';
import { searchTask } from '../src/search/task-search.js';

const DATA = fileURLToPath(new URL('../../bench/data/', import.meta.url));

export interface DataTool {
  name: string;
  title?: string;
  description: string;
  inputSchema?: unknown;
}
export interface DataServer {
  server: string;
  package: string;
  version: string;
  license: string;
  instructions?: string;
  tools: DataTool[];
}
export interface Query {
  id: string;
  split: 'tune' | 'test';
  query: string;
  relevant: string[];
}

export interface RetrievalSet {
  docs: SearchDoc[];
  servers: DataServer[];
  queries: Query[];
}

/** The key of a tool in the set: `server/tool`, as the queries name them. */
export const keyOf = (server: string, tool: string): string => `${server}/${tool}`;

/** The retrieval sets in bench/data: the project's own (`own`) and LiveMCPBench's (`livemcpbench`). */
export const SETS = { own: DATA, livemcpbench: `${DATA}livemcpbench/` } as const;

export function loadSet(dir: string = DATA): RetrievalSet {
  const tools = JSON.parse(readFileSync(`${dir}mcp-tools.json`, 'utf8')) as { servers: DataServer[] };
  const queries = (JSON.parse(readFileSync(`${dir}queries.json`, 'utf8')) as { queries: Query[] }).queries;
  const docs: SearchDoc[] = [];
  for (const s of tools.servers) {
    for (const t of s.tools) {
      docs.push({
        key: keyOf(s.server, t.name),
        name: t.name,
        server: s.server,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
        serverInstructions: s.instructions,
      });
    }
  }
  const known = new Set(docs.map((d) => d.key));
  for (const q of queries) {
    for (const r of q.relevant) if (!known.has(r)) throw new Error(`query ${q.id} names ${r}, which is not in mcp-tools.json`);
  }
  return { docs, servers: tools.servers, queries };
}

export interface Quality {
  queries: number;
  recall1: number;
  recall5: number;
  recall10: number;
  ndcg5: number;
  mrr: number;
}

/** The measures over queries, each query's ranking asked of `rank` (best first, at least 10 deep). */
export function measure(queries: readonly Query[], rank: (query: string) => readonly SearchHit[]): Quality {
  const sum = { recall1: 0, recall5: 0, recall10: 0, ndcg5: 0, mrr: 0 };
  for (const q of queries) {
    const relevant = new Set(q.relevant);
    const hits = rank(q.query).map((h) => h.key);
    const found = (k: number): number => hits.slice(0, k).filter((key) => relevant.has(key)).length / relevant.size;
    sum.recall1 += found(1);
    sum.recall5 += found(5);
    sum.recall10 += found(10);
    // Binary gains: DCG of the first five over the DCG of an ideal order.
    let dcg = 0;
    let ideal = 0;
    for (let i = 0; i < 5; i++) {
      if (relevant.has(hits[i] ?? '')) dcg += 1 / Math.log2(i + 2);
      if (i < relevant.size) ideal += 1 / Math.log2(i + 2);
    }
    sum.ndcg5 += dcg / ideal;
    const first = hits.findIndex((key) => relevant.has(key));
    sum.mrr += first < 0 ? 0 : 1 / (first + 1);
  }
  const n = queries.length || 1;
  return {
    queries: queries.length,
    recall1: sum.recall1 / n,
    recall5: sum.recall5 / n,
    recall10: sum.recall10 / n,
    ndcg5: sum.ndcg5 / n,
    mrr: sum.mrr / n,
  };
}

/** The text a plain BM25 reads of a tool: its name and description, or every field the tool index weighs. */
export type Bm25Fields = 'name+description' | 'all';

/** Every text of a tool the tool index gives a weight above 0: name, title, description, parameter descriptions, server. */
export function allText(doc: SearchDoc): string {
  const { descriptions } = schemaParameters(doc.inputSchema);
  return [doc.name, doc.title ?? '', doc.description ?? '', descriptions.join(' '), doc.server].join(' ');
}

/**
 * The baseline: textbook BM25 (k1 1.2, b 0.75) over one field, lower-cased and split at every character
 * that is not a letter or digit; no stemming, no stop words, no synonyms. The field is the tool's name
 * and description, or (`all`) the same texts the tool index reads with a weight above 0 (`allText`),
 * so the comparison is over the same fields. What a tool search that "uses BM25" does without further work.
 */
export class PlainBm25 {
  private readonly docs: { key: string; tf: Map<string, number>; length: number }[] = [];
  private readonly df = new Map<string, number>();
  private avg = 0;

  constructor(docs: readonly SearchDoc[], fields: Bm25Fields = 'name+description') {
    for (const doc of docs) {
      const words = PlainBm25.words(fields === 'all' ? allText(doc) : `${doc.name} ${doc.description ?? ''}`);
      const tf = new Map<string, number>();
      for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
      for (const w of tf.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1);
      this.docs.push({ key: doc.key, tf, length: words.length });
      this.avg += words.length;
    }
    this.avg /= Math.max(1, docs.length);
  }

  static words(text: string): string[] {
    return text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 0);
  }

  search(query: string, limit: number): SearchHit[] {
    const n = this.docs.length;
    const terms = [...new Set(PlainBm25.words(query))];
    const hits: SearchHit[] = [];
    for (const doc of this.docs) {
      let score = 0;
      for (const t of terms) {
        const tf = doc.tf.get(t);
        if (tf === undefined) continue;
        const df = this.df.get(t)!;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * doc.length) / this.avg));
      }
      if (score > 0) hits.push({ key: doc.key, score });
    }
    hits.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1));
    return hits.slice(0, limit);
  }
}

export function indexOf(docs: readonly SearchDoc[], options?: ToolIndexOptions): ToolIndex {
  const index = new ToolIndex(options);
  for (const doc of docs) index.upsert(doc);
  return index;
}

/** The figure the tuning maximizes: the mean of Recall@5, nDCG@5 and MRR (none dominates the choice). */
export const objective = (q: Quality): number => (q.recall5 + q.ndcg5 + q.mrr) / 3;

/**
 * Smallest rise of the objective a move must bring to be taken: about one tuning query found at rank 1
 * instead of not at all is (1 + 1 + 1) / 3 / 98 ≈ 0.01, so half of that. Smaller rises are one query's
 * rank moving by a place or two: noise of a 98-query split, not a better ranker.
 */
export const MIN_GAIN = 0.005;

export interface Tuned {
  options: Required<Pick<ToolIndexOptions, 'k1' | 'b' | 'synonymWeight' | 'coord' | 'actionBonus'>> & { weights: FieldWeights };
  /** The first set's measures at the chosen setting. */
  quality: Quality;
  /** The mean over the sets of their objectives at the chosen setting. */
  objective: number;
  steps: string[];
}

/**
 * Coordinate ascent on the tuning splits of the given sets: each field weight (and k1, b, the synonym
 * weight, coordination, the action bonus) tried at a few values while the others stay, the best kept,
 * until a round changes nothing. The objective is the mean over the sets of each set's objective, each
 * query ranked by `searchTask` (as search mode ranks it). Ties keep the current value, and a move must
 * raise the objective by MIN_GAIN, so a weight moves only when the tuning queries clearly say so.
 */
export function tune(sets: readonly RetrievalSet[], start: Tuned['options']): Tuned {
  const evaluate = (options: Tuned['options']): { objective: number; quality: Quality } => {
    const qualities = sets.map((set) => {
      const index = indexOf(set.docs, options);
      return measure(
        set.queries.filter((q) => q.split === 'tune'),
        (query) => searchTask(index, query, 10),
      );
    });
    return { objective: qualities.reduce((sum, q) => sum + objective(q), 0) / sets.length, quality: qualities[0]! };
  };
  let current = { ...start, weights: { ...start.weights } };
  let best = evaluate(current);
  const steps: string[] = [];
  const WEIGHTS = [0, 0.1, 0.25, 0.5, 1, 2, 3, 5];
  for (let round = 0; round < 3; round++) {
    let changed = false;
    const trials: [string, number[], (o: Tuned['options'], v: number) => Tuned['options']][] = [
      ...FIELDS.map(
        (field) =>
          [field, WEIGHTS, (o: Tuned['options'], v: number) => ({ ...o, weights: { ...o.weights, [field]: v } })] as [
            string,
            number[],
            (o: Tuned['options'], v: number) => Tuned['options'],
          ],
      ),
      ['k1', [0.6, 0.9, 1.2, 1.5, 2, 3], (o, v) => ({ ...o, k1: v })],
      ['b', [0.3, 0.5, 0.75, 0.9], (o, v) => ({ ...o, b: v })],
      ['synonymWeight', [0, 0.2, 0.3, 0.5, 0.7], (o, v) => ({ ...o, synonymWeight: v })],
      ['coord', [0, 0.25, 0.5, 1, 2], (o, v) => ({ ...o, coord: v })],
      ['actionBonus', [0, 0.1, 0.2, 0.3, 0.5], (o, v) => ({ ...o, actionBonus: v })],
    ];
    for (const [name, values, apply] of trials) {
      for (const v of values) {
        const candidate = apply(current, v);
        const result = evaluate(candidate);
        if (result.objective > best.objective + MIN_GAIN) {
          steps.push(`${name} → ${v}: ${best.objective.toFixed(3)} → ${result.objective.toFixed(3)}`);
          current = candidate;
          best = result;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  return { options: current, quality: best.quality, objective: best.objective, steps };
}
