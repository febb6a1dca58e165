// `/metrics` under `serve --workers N`: one scrape of the shared port shows every worker
// of the host. The primary hands a scrape's connection (no session) to any worker; that worker asks the primary
// over the IPC channel (`scrape`), the primary asks every listening worker for its exposition
// (`collect` → `samples`), waits at most COLLECT_TIMEOUT_MS for each (a hung or dead worker costs
// the scrape that long at worst, never a hang), and answers (`scraped`) with its own families —
// how many workers there are, answered, restarted — followed by every answer merged, each sample
// labelled `worker="host:pid"` (observability/exposition-merge.ts says why a label, not sums).
// Scrapes that arrive while a collection runs share it, so any number of scrapers cost one
// collection at a time. Bounded: a worker's answer (MAX_WORKER_CHARS), the whole merge
// (MAX_HOST_CHARS), the scrapes one worker waits on (MAX_PENDING_SCRAPES). A worker's own port
// still answers for it alone. Without `--workers`, none of this runs.

import { hostname } from 'node:os';
import { mergeExpositions, type Exposition } from '../observability/exposition-merge.js';
import type { Logger } from '../observability/logger.js';
import { Registry, type Sample } from '../observability/prometheus.js';

/** How long the primary waits for one worker's samples. */
const COLLECT_TIMEOUT_MS = 2000;
/** How long a worker waits for the primary's answer (the collection's timeout, plus margin). */
const ASK_TIMEOUT_MS = COLLECT_TIMEOUT_MS + 3000;
/** A worker's exposition larger than this is not sent (its `worker_scrape_up` reads 0, and it is logged). */
const MAX_WORKER_CHARS = 8 * 1024 * 1024;
/** The merged answer: workers past this are left out as if too large. */
const MAX_HOST_CHARS = 32 * 1024 * 1024;
/** Scrapes one worker has waiting on the primary at once; more are refused (503). */
const MAX_PENDING_SCRAPES = 16;

/** The IPC messages of a host scrape (serve.ts's `WorkerMessage` includes them). */
export type ScrapeMessage =
  /** worker → primary: a scrape reached me on the shared port. */
  | { mcpgate: 'scrape'; id: number }
  /** primary → worker: your exposition, please. */
  | { mcpgate: 'collect'; id: number }
  /** worker → primary: my exposition, or why not. */
  | { mcpgate: 'samples'; id: number; text?: string; error?: string }
  /** primary → worker: the host's exposition for your scrape `id`, or why not. */
  | { mcpgate: 'scraped'; id: number; text?: string; error?: string };

function isScrapeMessage(m: unknown, kind: ScrapeMessage['mcpgate']): boolean {
  return (
    typeof m === 'object' && m !== null && (m as { mcpgate?: unknown }).mcpgate === kind && Number.isSafeInteger((m as { id?: unknown }).id)
  );
}

/** A worker's answer to `collect`: its exposition, or an error when it is too large. */
export function samplesMessage(id: number, text: string): ScrapeMessage {
  if (text.length > MAX_WORKER_CHARS)
    return { mcpgate: 'samples', id, error: `its exposition is ${text.length} characters, over the ${MAX_WORKER_CHARS} a worker may send` };
  return { mcpgate: 'samples', id, text };
}

/** The worker's side: asks the primary for the host's exposition. */
export class HostScrapeClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  private closed = false;

  constructor(
    private readonly send: (m: ScrapeMessage) => void,
    private readonly timeoutMs = ASK_TIMEOUT_MS,
  ) {}

  ask(): Promise<string> {
    if (this.closed) return Promise.reject(new Error('this worker is stopping'));
    if (this.pending.size >= MAX_PENDING_SCRAPES)
      return Promise.reject(new Error(`${MAX_PENDING_SCRAPES} scrapes of this worker are already waiting for the primary`));
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the primary did not answer within ${this.timeoutMs} ms (each worker's own port still serves its /metrics)`));
      }, this.timeoutMs);
      timer.unref();
      this.pending.set(id, { resolve, reject, timer });
      try {
        this.send({ mcpgate: 'scrape', id });
      } catch (err) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new Error(`the primary cannot be asked: ${err instanceof Error ? err.message : String(err)}`));
      }
    });
  }

  /** An IPC message from the primary; true if it was the answer to a scrape. */
  onMessage(m: unknown): boolean {
    if (!isScrapeMessage(m, 'scraped')) return false;
    const { id, text, error } = m as Extract<ScrapeMessage, { mcpgate: 'scraped' }>;
    const waiting = this.pending.get(id);
    if (waiting === undefined) return true; // timed out meanwhile
    this.pending.delete(id);
    clearTimeout(waiting.timer);
    if (typeof text === 'string') waiting.resolve(text);
    else waiting.reject(new Error(typeof error === 'string' ? error : 'the primary sent no exposition'));
    return true;
  }

  /** Fails every waiting scrape; later ones are refused. Idempotent. */
  close(): void {
    this.closed = true;
    for (const [id, waiting] of this.pending) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error('this worker is stopping'));
      this.pending.delete(id);
    }
  }
}

/** A worker the primary can ask: listening, with a live IPC channel. */
interface Member {
  /** Its process id: the key of its answers. */
  pid: number;
  send(m: ScrapeMessage): void;
}

type Answer = { ok: true; text: string } | { ok: false; why: string };

interface HostScraperOptions {
  /** Workers configured (`--workers N`). */
  configured: number;
  /** The workers to ask now. */
  members: () => readonly Member[];
  /** Workers restarted after dying, so far. */
  restarts: () => number;
  /** Connections of the shared port handed to the worker their session named, and to the next in turn. */
  handed?: () => { owner: number; next: number };
  log: Logger;
  timeoutMs?: number;
  /** The worker label of a pid (default `hostname:pid`, as cluster/cluster.ts's workerId). */
  workerId?: (pid: number) => string;
}

/** The primary's side: collects every worker's samples and merges them. */
export class HostScraper {
  private nextId = 1;
  private collecting: Promise<string> | undefined;
  /** `pid:id` → the settle function of that worker's awaited answer. */
  private readonly waiting = new Map<string, (answer: Answer) => void>();
  /** Per worker of the last collection: whether it answered. */
  private last: { worker: string; up: boolean }[] = [];
  private readonly registry = new Registry();
  private readonly timeoutMs: number;
  private readonly workerId: (pid: number) => string;

  constructor(private readonly o: HostScraperOptions) {
    this.timeoutMs = o.timeoutMs ?? COLLECT_TIMEOUT_MS;
    const host = hostname();
    this.workerId = o.workerId ?? ((pid) => `${host}:${pid}`);
    const r = this.registry;
    r.gauge({ name: 'mcpgate_workers', help: 'Worker processes configured (serve --workers N).', collect: () => o.configured });
    r.gauge({
      name: 'mcpgate_workers_live',
      help: 'Workers listening when this scrape was collected (a restarted worker counts once it listens).',
      collect: () => this.last.length,
    });
    r.gauge({
      name: 'mcpgate_workers_scraped',
      help: 'Workers whose samples this scrape shows (every other live worker did not answer within the timeout, or sent too much).',
      collect: () => this.last.filter((w) => w.up).length,
    });
    r.gauge({
      name: 'mcpgate_worker_scrape_up',
      help: 'Per live worker: 1 if its samples are in this scrape, 0 if it did not answer in time or sent too much.',
      labels: ['worker'],
      collect: () => this.last.map((w): Sample => ({ labels: [w.worker], value: w.up ? 1 : 0 })),
    });
    r.counter({
      name: 'mcpgate_worker_restarts_total',
      help: 'Workers started again by the primary after one died unasked.',
      collect: () => o.restarts(),
    });
    const handed = o.handed;
    if (handed !== undefined) {
      r.counter({
        name: 'mcpgate_connections_handed_total',
        help: "Connections of the shared port the primary handed to a worker: to the worker the first request's session id named (owner), or to the next worker in turn (next: no session, or its worker not ready).",
        labels: ['to'],
        collect: () => {
          const h = handed();
          return [
            { labels: ['owner'], value: h.owner },
            { labels: ['next'], value: h.next },
          ];
        },
      });
    }
  }

  /** The host's exposition; a scrape arriving during a collection shares it. */
  scrape(): Promise<string> {
    this.collecting ??= this.collect().finally(() => (this.collecting = undefined));
    return this.collecting;
  }

  /** A `samples` message from worker `pid`. */
  onMessage(pid: number, m: unknown): boolean {
    if (!isScrapeMessage(m, 'samples')) return false;
    const { id, text, error } = m as Extract<ScrapeMessage, { mcpgate: 'samples' }>;
    const settle = this.waiting.get(`${pid}:${id}`);
    if (settle === undefined) return true; // timed out meanwhile
    if (typeof text === 'string' && text.length <= MAX_WORKER_CHARS) settle({ ok: true, text });
    else settle({ ok: false, why: typeof error === 'string' ? error.slice(0, 500) : 'its answer was too large or malformed' });
    return true;
  }

  /** Worker `pid` exited: whatever is waiting on it settles now. */
  gone(pid: number): void {
    const prefix = `${pid}:`;
    for (const [key, settle] of this.waiting) if (key.startsWith(prefix)) settle({ ok: false, why: 'it exited' });
  }

  private async collect(): Promise<string> {
    const id = this.nextId++;
    const members = this.o.members();
    const answers = await Promise.all(members.map((m) => this.ask(m, id)));
    const parts: Exposition[] = [];
    const last: { worker: string; up: boolean }[] = [];
    let chars = 0;
    for (let i = 0; i < members.length; i++) {
      const worker = this.workerId(members[i]!.pid);
      let answer = answers[i]!;
      if (answer.ok && chars + answer.text.length > MAX_HOST_CHARS)
        answer = { ok: false, why: `the host's exposition would pass ${MAX_HOST_CHARS} characters` };
      if (answer.ok) {
        chars += answer.text.length;
        parts.push({ worker, text: answer.text });
      } else {
        this.o.log.warn(`worker ${worker} is missing from a /metrics scrape: ${answer.why}`, { worker });
      }
      last.push({ worker, up: answer.ok });
      // An exited worker is not live: it is left out of the counts, as of the list.
      if (!answer.ok && answer.why === 'it exited') last.pop();
    }
    this.last = last;
    return this.registry.render() + mergeExpositions(parts);
  }

  private ask(member: Member, id: number): Promise<Answer> {
    return new Promise<Answer>((resolve) => {
      const key = `${member.pid}:${id}`;
      const settle = (answer: Answer): void => {
        if (!this.waiting.has(key)) return;
        this.waiting.delete(key);
        clearTimeout(timer);
        resolve(answer);
      };
      const timer = setTimeout(() => settle({ ok: false, why: `it did not answer within ${this.timeoutMs} ms` }), this.timeoutMs);
      timer.unref();
      this.waiting.set(key, settle);
      try {
        member.send({ mcpgate: 'collect', id });
      } catch (err) {
        settle({ ok: false, why: `it cannot be asked: ${err instanceof Error ? err.message : String(err)}` });
      }
    });
  }
}
