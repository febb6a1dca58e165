// Search mode's optional hybrid ranking: the lexical ranking (search-indexes.ts) fused by reciprocal
// rank (search/fuse.ts) with a ranking by embedding similarity from the operator's embeddings
// endpoint (embeddings.ts). Each tool's vector is kept by the digest of the text it was made from
// (so a changed tool is embedded again, an unchanged one never), in memory and in a bounded file in
// the state directory; a vector read back from the file is checked like one from the endpoint.
//
// The endpoint is a help, never a dependency: when it fails (timeout, status, body) the search
// answers with the lexical ranking and a warning is logged — at most one a minute, with the count of
// failures since the last one.

import { createHash } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ToolEntry, Catalog } from '../../catalog/catalog.js';
import { writeJsonAtomic } from '../../observability/atomic-json.js';
import type { Logger } from '../../observability/logger.js';
import { fuse } from '../../search/fuse.js';
import { schemaParameters } from '../../search/tool-fields.js';
import { checkedVector, EmbeddingsError, type EmbeddingsClient } from './embeddings.js';
import type { FoundTool, SearchIndexes } from './search-indexes.js';

/** Vectors kept (memory and file); past it the oldest are dropped. */
const MAX_VECTORS = 20_000;
/** A cache file larger than this is not read (it was not written by this bound). */
const MAX_CACHE_FILE_BYTES = 256 * 1024 * 1024;
/** Inputs per embeddings request. */
const BATCH = 64;
/** Tools embedded while a search waits; the rest are embedded after it answers. */
const EMBED_WHILE_WAITING = 256;
/** The fused lists are this deep: the lexical list and the vector list each give their best 50. */
const DEPTH = 50;
const WARN_EVERY_MS = 60_000;
const SAVE_DELAY_MS = 1000;

interface HybridStatus {
  endpoint: string;
  model: string;
  vectors: number;
  /** Searches answered with the fused ranking. */
  hybridSearches: number;
  /** Searches that fell back to lexical because the endpoint failed. */
  fallbacks: number;
  lastError?: string;
}

export class HybridRanking {
  readonly depth = DEPTH;
  private readonly vectors = new Map<string, Float32Array>();
  private readonly digests = new WeakMap<object, string>();
  private hybridSearches = 0;
  private fallbacks = 0;
  private lastError: string | undefined;
  private lastWarnAt = -Infinity;
  private unwarned = 0;
  private filling: Promise<void> | undefined;
  private saveTimer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly client: EmbeddingsClient,
    /** The vector cache file (in the state directory); undefined: memory only. */
    private readonly file: string | undefined,
    private readonly log: Logger,
  ) {}

  /** Reads the vector cache file, keeping only valid vectors of this model. */
  async load(): Promise<void> {
    if (this.file === undefined) return;
    try {
      const size = (await stat(this.file)).size;
      if (size > MAX_CACHE_FILE_BYTES) {
        this.log.warn('the embeddings cache file is too large and is not read', { file: this.file, bytes: size });
        return;
      }
      const raw = JSON.parse(await readFile(this.file, 'utf8')) as unknown;
      const kept = readCache(raw, this.client.model, this.vectors);
      this.log.debug('embeddings cache read', { file: this.file, vectors: kept });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.log.warn('the embeddings cache file could not be read; starting empty', { file: this.file, error: (err as Error).message });
    }
  }

  /** The lexical hits fused with the vector ranking over every tool the agent may call; lexical alone if the endpoint fails. */
  async rank(
    request: { readonly query: string; readonly limit: number },
    lexical: FoundTool[],
    among: { readonly indexes: SearchIndexes; readonly own: readonly Catalog[] | undefined; readonly allow: (entry: ToolEntry) => boolean },
  ): Promise<FoundTool[]> {
    const { query, limit } = request;
    const { indexes, own, allow } = among;
    const candidates = [...indexes.candidates(own, allow)];
    try {
      const [queryVector] = await this.client.embed([query]);
      const missing = candidates.filter((c) => !this.vectors.has(this.digestOf(c)));
      await this.embed(missing.slice(0, EMBED_WHILE_WAITING));
      if (missing.length > EMBED_WHILE_WAITING) this.fillLater(missing.slice(EMBED_WHILE_WAITING));
      const q = unit(queryVector!);
      const scored: FoundTool[] = [];
      for (const c of candidates) {
        const v = this.vectors.get(this.digestOf(c));
        if (v === undefined || v.length !== q.length) continue;
        scored.push({ ...c, score: dot(q, v) });
      }
      scored.sort((a, b) => b.score - a.score);
      const vector = scored.slice(0, DEPTH);
      const byKey = new Map<string, FoundTool>();
      for (const hit of [...lexical, ...vector]) if (!byKey.has(hit.key)) byKey.set(hit.key, hit);
      this.hybridSearches++;
      return fuse(lexical, vector, { limit }).map((hit) => ({ ...byKey.get(hit.key)!, score: hit.score }));
    } catch (err) {
      if (!(err instanceof EmbeddingsError)) throw err;
      this.failed(err);
      return lexical.slice(0, limit);
    }
  }

  status(): HybridStatus {
    return {
      endpoint: this.client.endpoint,
      model: this.client.model,
      vectors: this.vectors.size,
      hybridSearches: this.hybridSearches,
      fallbacks: this.fallbacks,
      ...(this.lastError !== undefined && { lastError: this.lastError }),
    };
  }

  /** Writes what is pending to the cache file. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.saveTimer !== undefined) {
      clearTimeout(this.saveTimer);
      this.saveTimer = undefined;
      this.save();
    }
    await this.saving;
  }

  private failed(err: EmbeddingsError): void {
    this.fallbacks++;
    this.lastError = err.message;
    const now = performance.now();
    if (now - this.lastWarnAt < WARN_EVERY_MS) {
      this.unwarned++;
      return;
    }
    this.log.warn('the embeddings endpoint failed; searches are ranked lexically', {
      endpoint: this.client.endpoint,
      error: err.message,
      ...(this.unwarned > 0 && { failuresSinceLastWarning: this.unwarned }),
    });
    this.lastWarnAt = now;
    this.unwarned = 0;
  }

  private async embed(tools: readonly FoundTool[]): Promise<void> {
    for (let i = 0; i < tools.length; i += BATCH) {
      const batch = tools.slice(i, i + BATCH);
      const vectors = await this.client.embed(batch.map((t) => textOf(t.key, t.entry)));
      batch.forEach((t, j) => this.keep(this.digestOf(t), unit(vectors[j]!)));
    }
    if (tools.length > 0) this.scheduleSave();
  }

  /** Embeds the rest after the search answered, one fill at a time; a failure is only counted. */
  private fillLater(tools: readonly FoundTool[]): void {
    if (this.filling !== undefined || this.closed) return;
    this.filling = this.embed(tools)
      .catch((err: unknown) => {
        if (err instanceof EmbeddingsError) this.failed(err);
        else this.log.warn('embedding tools failed', { error: err });
      })
      .finally(() => (this.filling = undefined));
  }

  private keep(digest: string, vector: Float32Array): void {
    this.vectors.delete(digest);
    this.vectors.set(digest, vector);
    if (this.vectors.size > MAX_VECTORS) this.vectors.delete(this.vectors.keys().next().value!);
  }

  private digestOf(hit: FoundTool): string {
    let digest = this.digests.get(hit.entry.tool);
    if (digest === undefined) {
      digest = createHash('sha256')
        .update(`${this.client.model}\u0000${textOf(hit.key, hit.entry)}`)
        .digest('base64url');
      this.digests.set(hit.entry.tool, digest);
    }
    return digest;
  }

  private scheduleSave(): void {
    if (this.file === undefined || this.saveTimer !== undefined || this.closed) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.save();
    }, SAVE_DELAY_MS);
    this.saveTimer.unref();
  }

  private save(): void {
    const file = this.file;
    if (file === undefined) return;
    const vectors: Record<string, string> = {};
    for (const [digest, v] of this.vectors) vectors[digest] = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
    const body = { version: 1, model: this.client.model, vectors };
    this.saving = this.saving
      .then(async () => {
        await mkdir(dirname(file), { recursive: true, mode: 0o700 });
        await writeJsonAtomic(file, body, 0o600);
      })
      .catch((err: unknown) => this.log.warn('the embeddings cache file could not be written', { file, error: (err as Error).message }));
  }
}

/** The text a tool is embedded from: its name, title, description and parameters. */
function textOf(key: string, entry: ToolEntry): string {
  const { tool } = entry;
  const params = schemaParameters(tool.inputSchema);
  return [
    `${key} (${tool.name} of ${entry.server})`,
    typeof tool.title === 'string' ? tool.title : '',
    typeof tool.description === 'string' ? tool.description : '',
    params.names.length > 0 ? `parameters: ${params.names.join(', ')}` : '',
  ]
    .filter((s) => s !== '')
    .join('\n')
    .slice(0, 8000);
}

/** Reads a cache file's vectors of `model` into `into`; returns how many were kept. Anything invalid is skipped. */
function readCache(raw: unknown, model: string, into: Map<string, Float32Array>): number {
  if (typeof raw !== 'object' || raw === null) return 0;
  const { version, model: m, vectors } = raw as Record<string, unknown>;
  if (version !== 1 || m !== model || typeof vectors !== 'object' || vectors === null) return 0;
  let kept = 0;
  let dims: number | undefined;
  for (const [digest, text] of Object.entries(vectors)) {
    if (kept >= MAX_VECTORS) break;
    if (typeof text !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(digest)) continue;
    const bytes = Buffer.from(text, 'base64');
    if (bytes.length === 0 || bytes.length % 4 !== 0) continue;
    const floats = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    const vector = checkedVector(Array.from(floats), dims);
    if (vector === undefined) continue;
    dims = vector.length;
    into.set(digest, unit(vector));
    kept++;
  }
  return kept;
}

function unit(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  if (norm === 0 || !Number.isFinite(norm)) return v;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
