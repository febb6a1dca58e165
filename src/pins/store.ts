// The pin store in the state directory: `pins.json` (approved definitions, written by the gateway on
// first use and by `mcpgate approve`) and `held.json` (what a running gateway currently holds back,
// written by the gateway, read by `mcpgate pins` and `approve`). Readable JSON an operator can audit.
// Every write is atomic (observability/atomic-json.ts: temp file, fsync, rename, fsync of the directory); read-modify-write of
// pins.json happens under a lock file, so `approve` and a running gateway never lose each other's pins.
// The lock is `pins.json.lock`, made with O_EXCL and taken for stale after 30 s. A corrupt file is an
// error, never "no pins".

import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { writeJsonAtomic } from '../observability/atomic-json.js';
import type { ToolDefinition } from './digest.js';

export const PINS_FILE = 'pins.json';
export const HELD_FILE = 'held.json';

const DefinitionSchema = z.looseObject({ name: z.string() });

const PinSchema = z.object({
  digest: z.string().startsWith('sha256:'),
  definition: DefinitionSchema,
  approvedAt: z.string(),
  /** `first-use` (pinned by the gateway in tofu mode) or `operator` (mcpgate approve). */
  by: z.enum(['first-use', 'operator']),
});
const InstructionsPinSchema = z.object({
  digest: z.string().startsWith('sha256:'),
  text: z.string(),
  approvedAt: z.string(),
  by: z.enum(['first-use', 'operator']),
});

const PinsFileSchema = z.object({
  version: z.literal(1),
  servers: z.record(
    z.string(),
    z.object({
      tools: z.record(z.string(), PinSchema),
      instructions: InstructionsPinSchema.optional(),
    }),
  ),
});

const HeldToolSchema = z.object({ digest: z.string(), definition: DefinitionSchema, changes: z.array(z.string()), since: z.string() });
const HeldFileSchema = z.object({
  version: z.literal(1),
  updatedAt: z.string(),
  servers: z.record(
    z.string(),
    z.object({
      tools: z.record(z.string(), HeldToolSchema),
      instructions: z.object({ digest: z.string(), text: z.string(), since: z.string() }).optional(),
    }),
  ),
});

export type Pin = z.infer<typeof PinSchema> & { definition: ToolDefinition };
export type InstructionsPin = z.infer<typeof InstructionsPinSchema>;
export type PinsFile = z.infer<typeof PinsFileSchema>;
export type ServerPins = PinsFile['servers'][string];
export type HeldTool = z.infer<typeof HeldToolSchema> & { definition: ToolDefinition };
export type HeldFile = z.infer<typeof HeldFileSchema>;
export type ServerHeld = HeldFile['servers'][string];

/**
 * A table keyed by names a server or an operator chose (servers, tools): no prototype, so a tool
 * called `constructor` or `__proto__` is a key like any other, never Object's own member.
 */
export function nameMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

export const emptyPins = (): PinsFile => ({ version: 1, servers: nameMap() });
export const emptyHeld = (): HeldFile => ({ version: 1, updatedAt: new Date(0).toISOString(), servers: nameMap() });

const LOCK_WAIT_MS = 5000;
const LOCK_STALE_MS = 30_000;

export class PinStore {
  readonly pinsPath: string;
  readonly heldPath: string;
  private readonly lockPath: string;

  constructor(readonly dir: string) {
    this.pinsPath = join(dir, PINS_FILE);
    this.heldPath = join(dir, HELD_FILE);
    this.lockPath = join(dir, `${PINS_FILE}.lock`);
  }

  /** The approved pins; an absent file is an empty store, a corrupt one is an error (never "no pins"). */
  readPins(): Promise<PinsFile> {
    return readJson(this.pinsPath, PinsFileSchema, emptyPins) as Promise<PinsFile>;
  }

  /**
   * The same, read at once (one blocking read): a gateway reads its store right after spawning its
   * servers, while they boot; read piece by piece, a large file would wait behind their lists.
   */
  readPinsNow(): PinsFile {
    let text: string | undefined;
    try {
      text = readFileSync(this.pinsPath, 'utf8');
    } catch (err) {
      text = readError(this.pinsPath, err);
    }
    return (text === undefined ? emptyPins() : parseStore(this.pinsPath, text, PinsFileSchema)) as PinsFile;
  }

  readHeld(): Promise<HeldFile> {
    return readJson(this.heldPath, HeldFileSchema, emptyHeld) as Promise<HeldFile>;
  }

  /** Identifies the current pins.json content cheaply (for the gateway's watch). */
  async pinsVersion(): Promise<string> {
    try {
      const s = await stat(this.pinsPath);
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      return 'absent';
    }
  }

  /** Read-modify-write of pins.json under the lock; `change` returns false to skip the write. */
  async updatePins(change: (pins: PinsFile) => boolean): Promise<PinsFile> {
    await mkdir(this.dir, { recursive: true });
    const release = await this.lock();
    try {
      const pins = await this.readPins();
      if (change(pins)) await writeJsonAtomic(this.pinsPath, pins);
      return pins;
    } finally {
      await release();
    }
  }

  async writeHeld(held: HeldFile): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeJsonAtomic(this.heldPath, held);
  }

  private async lock(): Promise<() => Promise<void>> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        const handle = await open(this.lockPath, 'wx');
        await handle.writeFile(`${process.pid}\n`);
        await handle.close();
        return () => unlink(this.lockPath).catch(() => {});
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw storeError(`cannot lock ${this.lockPath}: ${(err as Error).message}`);
        // A lock left by a process that died mid-write is stale after a while; writes take milliseconds.
        const age = await stat(this.lockPath).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        if (age > LOCK_STALE_MS && (await this.breakStaleLock())) continue;
        if (Date.now() > deadline)
          throw storeError(
            `the pin store is locked by another process (${this.lockPath}); retry, or remove the lock file if no mcpgate is running`,
          );
        await new Promise((r) => setTimeout(r, 10 + Math.random() * 20));
      }
    }
  }

  /**
   * Removes a stale lock, under a second lock and after looking again: two writers that both saw the
   * stale lock must not both remove "it", or the second removes the lock the first has just taken
   * and both write (lost pins). False when someone else is breaking it (the caller waits).
   */
  private async breakStaleLock(): Promise<boolean> {
    const guard = `${this.lockPath}.break`;
    try {
      await (await open(guard, 'wx')).close();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw storeError(`cannot lock ${guard}: ${(err as Error).message}`);
      // A guard left by a process that died within these few lines would otherwise block for good.
      const age = await stat(guard).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > LOCK_STALE_MS) await unlink(guard).catch(() => {});
      return false;
    }
    try {
      const age = await stat(this.lockPath).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > LOCK_STALE_MS) await unlink(this.lockPath).catch(() => {});
    } finally {
      await unlink(guard).catch(() => {});
    }
    return true;
  }
}

async function readJson(path: string, schema: z.ZodType, empty: () => unknown): Promise<unknown> {
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    text = readError(path, err);
  }
  return text === undefined ? empty() : parseStore(path, text, schema);
}

/** An absent file is an empty store (undefined); any other failure to read is an error. */
function readError(path: string, err: unknown): undefined {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw storeError(`cannot read ${path}: ${(err as Error).message}`);
}

function parseStore(path: string, text: string, schema: z.ZodType): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw storeError(
      `${path} is not valid JSON (${(err as Error).message.split('\n')[0] ?? ''}); fix or remove it — until then nothing is released`,
    );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw storeError(
      `${path} is not a valid pin store: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}; fix or remove it — until then nothing is released`,
    );
  }
  // zod rebuilds records as plain objects, where a key "__proto__" is lost (it sets the prototype);
  // the validated JSON itself has every name as an own key: copy its tables into name maps.
  return withNameMaps(value as StoreFile);
}

type StoreFile = { servers: Record<string, { tools: Record<string, unknown> }> };

function withNameMaps(file: StoreFile): StoreFile {
  const servers = nameMap<StoreFile['servers'][string]>();
  for (const server of Object.keys(file.servers)) {
    const entry = file.servers[server]!;
    const tools = nameMap<unknown>();
    for (const tool of Object.keys(entry.tools)) tools[tool] = entry.tools[tool];
    servers[server] = { ...entry, tools };
  }
  return { ...file, servers };
}

function storeError(message: string): GatewayError {
  return new GatewayError('MCPG_PIN_STORE_INVALID', message);
}
