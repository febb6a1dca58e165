// The client of an operator's OpenAI-compatible embeddings endpoint (`POST …/v1/embeddings`,
// `{"model", "input": [text…]}` → `{"data": [{"index", "embedding": [number…]}]}`), for search
// mode's hybrid ranking. Nothing it reads back is trusted: the answer is bounded in size, every
// vector must be an array of finite numbers of one length, one per input. The API key goes only in
// the Authorization header: it is never logged, nor part of an error.

/** What the operator configures (`--embeddings-url`, `--embeddings-model`, MCPGATE_EMBEDDINGS_API_KEY). */
export interface EmbeddingsSettings {
  /** The endpoint: a base URL (`…/v1`, `/embeddings` is added) or the full `…/embeddings` URL. */
  readonly url: string;
  readonly model: string;
  readonly apiKey?: string;
  /** Per request (default 2000 ms): past it the search goes on lexically. */
  readonly timeoutMs?: number;
}

const DEFAULT_EMBEDDINGS_TIMEOUT_MS = 2000;
/** Largest answer read: a batch of 64 inputs of 3,072 dimensions is about 4 MB of JSON. */
const MAX_EMBEDDINGS_RESPONSE_BYTES = 32 * 1024 * 1024;
const MAX_DIMENSIONS = 8192;

/** An embeddings request that did not give usable vectors, and why (no secret in it). */
export class EmbeddingsError extends Error {}

export class EmbeddingsClient {
  private readonly url: string;
  /** The endpoint as logs and the status show it: without its query. */
  readonly endpoint: string;
  readonly model: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;

  constructor(settings: EmbeddingsSettings) {
    const url = new URL(settings.url); // throws on a malformed URL: the CLI checks first
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new EmbeddingsError(`the embeddings URL must be http or https, got ${url.protocol}`);
    if (url.username !== '' || url.password !== '')
      throw new EmbeddingsError('the embeddings URL may not hold credentials: put the key in MCPGATE_EMBEDDINGS_API_KEY');
    if (!url.pathname.endsWith('/embeddings')) url.pathname = `${url.pathname.replace(/\/$/, '')}/embeddings`;
    this.url = url.href;
    this.endpoint = `${url.origin}${url.pathname}`;
    this.model = settings.model;
    this.apiKey = settings.apiKey;
    this.timeoutMs = settings.timeoutMs ?? DEFAULT_EMBEDDINGS_TIMEOUT_MS;
  }

  /** One vector per input, in order; throws EmbeddingsError (timeout, status, body). */
  async embed(inputs: readonly string[]): Promise<Float32Array[]> {
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.apiKey !== undefined && { authorization: `Bearer ${this.apiKey}` }) },
        body: JSON.stringify({ model: this.model, input: inputs }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const name = (err as { name?: string }).name;
      throw new EmbeddingsError(
        name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : `request failed: ${(err as Error).message}`,
      );
    }
    if (!res.ok) {
      void res.body?.cancel();
      throw new EmbeddingsError(`HTTP ${res.status}`);
    }
    const text = await readBounded(res, this.timeoutMs);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new EmbeddingsError('the answer is not JSON');
    }
    return vectorsOf(body, inputs.length);
  }
}

async function readBounded(res: Response, timeoutMs: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > MAX_EMBEDDINGS_RESPONSE_BYTES) {
    void res.body?.cancel();
    throw new EmbeddingsError(`the answer is ${declared} bytes; at most ${MAX_EMBEDDINGS_RESPONSE_BYTES}`);
  }
  if (res.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  timer.unref();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_EMBEDDINGS_RESPONSE_BYTES) {
        void reader.cancel();
        throw new EmbeddingsError(`the answer exceeds ${MAX_EMBEDDINGS_RESPONSE_BYTES} bytes`);
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof EmbeddingsError) throw err;
    throw new EmbeddingsError(`reading the answer failed: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The vectors of an embeddings answer, checked: `count` of them, one length, finite numbers. */
function vectorsOf(body: unknown, count: number): Float32Array[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new EmbeddingsError('the answer has no "data" array');
  if (data.length !== count) throw new EmbeddingsError(`the answer has ${data.length} vectors for ${count} inputs`);
  const out = new Array<Float32Array | undefined>(count);
  let dims: number | undefined;
  data.forEach((item: unknown, i) => {
    const entry = item as { index?: unknown; embedding?: unknown } | null;
    const index = typeof entry?.index === 'number' ? entry.index : i;
    if (!Number.isInteger(index) || index < 0 || index >= count || out[index] !== undefined)
      throw new EmbeddingsError(`vector ${i} has a bad or repeated index`);
    const vector = checkedVector(entry?.embedding, dims);
    if (vector === undefined)
      throw new EmbeddingsError(`vector ${i} is not an array of finite numbers${dims === undefined ? '' : ` of length ${dims}`}`);
    dims = vector.length;
    out[index] = vector;
  });
  return out as Float32Array[];
}

/** An array of finite numbers (of length `dims` when given, at most MAX_DIMENSIONS), or undefined. */
export function checkedVector(value: unknown, dims?: number): Float32Array | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_DIMENSIONS) return undefined;
  if (dims !== undefined && value.length !== dims) return undefined;
  const vector = new Float32Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const x: unknown = value[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) return undefined;
    vector[i] = x;
  }
  return vector;
}
