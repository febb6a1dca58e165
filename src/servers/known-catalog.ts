// An on-demand server's last known catalog, kept in the state directory (`STATE/catalogs/SERVER.json`):
// what its live session last listed (tools, resources, templates, prompts) and its instructions, so
// the gateway can list the server without starting it. Written atomically whenever what the live
// server lists changes (an unchanged catalog is not written again), bounded in size. Read back as
// untrusted input: every list is checked as a server's answer is (lists.ts `checkList`, under the
// entry's limits), and a file that fails any check is a warning and treated as unknown — the server
// is then started once to learn its catalog again.
// The file's name is the URI-encoded server name; it is written through observability/atomic-json.ts
// (0600, at most 16 MiB), one write at a time per server, and a refresh of one list is merged into the
// rest.

import { mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerConfig } from '../config/types.js';
import { DEFAULT_LIMITS } from '../config/types.js';
import { writeJsonAtomic } from '../observability/atomic-json.js';
import type { Logger } from '../observability/logger.js';
import { checkList, LIST_KINDS, type ServerLists } from './lists.js';

/** What is known of a server that is not running. */
export interface KnownCatalog {
  readonly lists: ServerLists;
  readonly instructions: string | undefined;
  /** Whether it spoke 2026-07-28 (its tools' header annotations are checked as a modern server's). */
  readonly modern: boolean;
}

/** The largest file read or written: a catalog past it is not kept (the server is learned at each run). */
const MAX_KNOWN_CATALOG_BYTES = 16 * 1024 * 1024;
/** The longest instructions kept. */
const MAX_INSTRUCTIONS = 256 * 1024;
const FORMAT = 1;

export class KnownCatalogs {
  /** The catalog last read or written per server (the base that a refresh of one list is merged into). */
  private readonly kept = new Map<string, { catalog: KnownCatalog; text: string }>();
  /** Each server's writes in order, one at a time. */
  private readonly writes = new Map<string, Promise<void>>();

  /** `dir`: the state directory's `catalogs/`. */
  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  fileOf(server: string): string {
    // A server name may hold any character: the file name is its URI encoding.
    return join(this.dir, `${encodeURIComponent(server)}.json`);
  }

  /** The server's last known catalog; undefined when none is kept or the file is unusable (a warning says why). */
  async load(config: ServerConfig): Promise<KnownCatalog | undefined> {
    const file = this.fileOf(config.name);
    let text: string;
    try {
      text = await readBounded(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      return this.unusable(config.name, file, err instanceof Error ? err.message : String(err));
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      return this.unusable(config.name, file, `not JSON (${err instanceof Error ? err.message : String(err)})`);
    }
    const catalog = await parseKnown(raw, config);
    if (typeof catalog === 'string') return this.unusable(config.name, file, catalog);
    this.kept.set(config.name, { catalog, text: serialize(config.name, catalog) });
    return catalog;
  }

  /**
   * What the live server lists now (`lists` may hold only the lists that were fetched again): merged
   * into what is known and written when it differs from the file.
   */
  record(server: string, lists: Partial<ServerLists>, instructions: string | undefined, modern: boolean): void {
    const base = this.kept.get(server)?.catalog.lists ?? { tools: [], resources: [], resourceTemplates: [], prompts: [] };
    const catalog: KnownCatalog = { lists: { ...base, ...lists }, instructions: instructions?.slice(0, MAX_INSTRUCTIONS), modern };
    const text = serialize(server, catalog);
    if (this.kept.get(server)?.text === text) return;
    this.kept.set(server, { catalog, text });
    const previous = this.writes.get(server) ?? Promise.resolve();
    const next = previous
      .then(() => this.write(server, text))
      .catch((err: unknown) =>
        this.log.warn(`could not keep the catalog of server "${server}"; it will be started to learn it again`, { server, error: err }),
      );
    this.writes.set(server, next);
    void next.then(() => {
      if (this.writes.get(server) === next) this.writes.delete(server);
    });
  }

  /** The instructions the server last gave (for `initialize` while it rests). */
  instructionsOf(server: string): string | undefined {
    return this.kept.get(server)?.catalog.instructions;
  }

  /** Every write under way, finished (shutdown waits for them). */
  async flush(): Promise<void> {
    await Promise.all(this.writes.values());
  }

  private async write(server: string, text: string): Promise<void> {
    const file = this.fileOf(server);
    if (Buffer.byteLength(text) > MAX_KNOWN_CATALOG_BYTES) {
      // A stale file would list what the server no longer has: it goes, and the next run learns again.
      await unlink(file).catch(() => {});
      this.log.warn(
        `the catalog of server "${server}" is larger than ${MAX_KNOWN_CATALOG_BYTES} bytes: not kept (it is started to learn it at each run)`,
        { server },
      );
      return;
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeJsonAtomic(file, JSON.parse(text), 0o600);
  }

  private unusable(server: string, file: string, why: string): undefined {
    this.log.warn(
      `the last known catalog of server "${server}" (${file}) is unusable: ${why}; it is treated as unknown, and the server is started once to learn its catalog`,
      { server, file },
    );
    return undefined;
  }
}

function serialize(server: string, catalog: KnownCatalog): string {
  return JSON.stringify({
    format: FORMAT,
    server,
    modern: catalog.modern,
    ...(catalog.instructions !== undefined && { instructions: catalog.instructions }),
    ...catalog.lists,
  });
}

/** Reads at most MAX_KNOWN_CATALOG_BYTES (+1, to know it is over) of a file. */
async function readBounded(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(MAX_KNOWN_CATALOG_BYTES + 1, Math.max(1, (await handle.stat()).size + 1)));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_KNOWN_CATALOG_BYTES) throw new Error(`larger than ${MAX_KNOWN_CATALOG_BYTES} bytes`);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The file's content checked field by field, or why it is refused. */
async function parseKnown(raw: unknown, config: ServerConfig): Promise<KnownCatalog | string> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not a JSON object';
  const o = raw as Record<string, unknown>;
  if (o.format !== FORMAT) return `format ${JSON.stringify(o.format)} is not ${FORMAT}`;
  if (o.server !== config.name) return 'it names another server';
  if (typeof o.modern !== 'boolean') return '"modern" is not true or false';
  if (o.instructions !== undefined && (typeof o.instructions !== 'string' || o.instructions.length > MAX_INSTRUCTIONS))
    return '"instructions" is not a string of bounded length';
  const lists: Record<string, unknown[]> = {};
  for (const kind of LIST_KINDS) {
    const items = await checkList(kind, o[kind], config.limits ?? DEFAULT_LIMITS, o.modern);
    if (typeof items === 'string') return items;
    lists[kind] = items;
  }
  return { lists: lists as unknown as ServerLists, instructions: o.instructions, modern: o.modern };
}
