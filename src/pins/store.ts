// The pin store in the state directory: `pins.json` (approved definitions, written by the gateway on
// first use and by `mcpgate approve`; one definition a line, `pinsTextParts`, so an operator can audit it),
// `held.json` (what a running gateway holds back, read by `mcpgate pins` and `approve`) and
// `pin-digests.json` (the pins without their definitions, what a gateway reviews tools against).
// Every write is atomic (observability/atomic-json.ts) and a read-modify-write of pins.json runs
// under a lock file, so `approve` and a running gateway never lose each other's pins. A corrupt file
// is an error, never "no pins". When the digests index is trusted, and the lock: the room's README.

import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { closeSync, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { writeJsonAtomic, writeTextAtomic } from '../observability/atomic-json.js';

const PINS_FILE = 'pins.json';
const HELD_FILE = 'held.json';
const PIN_DIGESTS_FILE = 'pin-digests.json';

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

type InstructionsPin = z.infer<typeof InstructionsPinSchema>;
export type PinsFile = z.infer<typeof PinsFileSchema>;
export type ServerPins = PinsFile['servers'][string];
export type HeldFile = z.infer<typeof HeldFileSchema>;
/** One approved tool without its definition: all a review compares. */
type PinDigest = Omit<z.infer<typeof PinSchema>, 'definition'>;
/** The pins without their definitions (pin-digests.json, or pins.json read and stripped). */
export type PinDigests = { servers: Record<string, ServerPinDigests> };
export type ServerPinDigests = { tools: Record<string, PinDigest>; instructions?: InstructionsPin };
/** The pin digests as read, the pins.json they are of, and whether the index on disk already said so. */
export interface DigestsRead {
  digests: PinDigests;
  version: string;
  /** False: pins.json was read whole, the index on disk is missing or stale (`writeDigests` it). */
  indexed: boolean;
}
export type ServerHeld = HeldFile['servers'][string];

/**
 * A table keyed by names a server or an operator chose (servers, tools): no prototype, so a tool
 * called `constructor` or `__proto__` is a key like any other, never Object's own member.
 */
export function nameMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

const emptyPins = (): PinsFile => ({ version: 1, servers: nameMap() });
export const emptyHeld = (): HeldFile => ({ version: 1, updatedAt: new Date(0).toISOString(), servers: nameMap() });

/** The pins without their definitions. */
export function digestsOf(file: PinsFile): PinDigests {
  const servers = nameMap<ServerPinDigests>();
  for (const server of Object.keys(file.servers)) servers[server] = serverDigestsOf(file.servers[server]!);
  return { servers };
}

export function serverDigestsOf(entry: ServerPins): ServerPinDigests {
  const tools = nameMap<PinDigest>();
  for (const name of Object.keys(entry.tools)) {
    const { digest, approvedAt, by } = entry.tools[name]!;
    tools[name] = { digest, approvedAt, by };
  }
  return entry.instructions === undefined ? { tools } : { tools, instructions: entry.instructions };
}

/** Names one content of a file: a rename over it (every write of the store) makes a new inode. */
function versionOf(s: Stats): string {
  return `${s.mtimeMs}:${s.size}:${s.ino}`;
}

const LOCK_WAIT_MS = 5000;
const LOCK_STALE_MS = 30_000;

export class PinStore {
  readonly pinsPath: string;
  readonly heldPath: string;
  readonly digestsPath: string;
  private readonly lockPath: string;

  constructor(readonly dir: string) {
    this.pinsPath = join(dir, PINS_FILE);
    this.heldPath = join(dir, HELD_FILE);
    this.lockPath = join(dir, `${PINS_FILE}.lock`);
    this.digestsPath = join(dir, PIN_DIGESTS_FILE);
  }

  /** The approved pins; an absent file is an empty store, a corrupt one is an error (never "no pins"). */
  readPins(): Promise<PinsFile> {
    return readJson(this.pinsPath, PinsFileSchema, emptyPins) as Promise<PinsFile>;
  }

  readHeld(): Promise<HeldFile> {
    return readJson(this.heldPath, HeldFileSchema, emptyHeld) as Promise<HeldFile>;
  }

  /**
   * The pins' digests, at once (one blocking read: a gateway reads its store right after spawning its servers, while they
   * boot; read piece by piece, a large file would wait behind their lists): from pin-digests.json when it is
   * of the pins.json on disk, else from pins.json read whole. The version is taken from the open file,
   * so it names exactly the content read.
   */
  readDigestsNow(): DigestsRead {
    let fd: number;
    try {
      fd = openSync(this.pinsPath, 'r');
    } catch (err) {
      readError(this.pinsPath, err);
      return { digests: { servers: nameMap() }, version: 'absent', indexed: true };
    }
    try {
      const version = versionOf(fstatSync(fd));
      const indexed = this.indexOf(version, () => readFileSync(this.digestsPath, 'utf8'));
      if (indexed !== undefined) return { digests: indexed, version, indexed: true };
      let text: string;
      try {
        text = readFileSync(fd, 'utf8');
      } catch (err) {
        throw storeError(`cannot read ${this.pinsPath}: ${(err as Error).message}`);
      }
      return { digests: digestsOf(parseStore(this.pinsPath, text, PinsFileSchema) as PinsFile), version, indexed: false };
    } finally {
      closeSync(fd);
    }
  }

  /** The same, read without blocking (the gateway's watch, after pins.json changed). */
  async readDigests(): Promise<DigestsRead> {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(this.pinsPath, 'r');
    } catch (err) {
      readError(this.pinsPath, err);
      return { digests: { servers: nameMap() }, version: 'absent', indexed: true };
    }
    try {
      const version = versionOf(await handle.stat());
      let indexText: string | undefined;
      try {
        indexText = await readFile(this.digestsPath, 'utf8');
      } catch {
        // No index (or an unreadable one): pins.json is read whole.
      }
      const indexed = indexText === undefined ? undefined : this.indexOf(version, () => indexText);
      if (indexed !== undefined) return { digests: indexed, version, indexed: true };
      return { digests: digestsOf(await this.parseOpened(handle)), version, indexed: false };
    } finally {
      await handle.close();
    }
  }

  /** pins.json and the version of exactly what was read (the open file's stat, not a second look). */
  private async readPinsVersioned(): Promise<{ pins: PinsFile; version: string }> {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(this.pinsPath, 'r');
    } catch (err) {
      readError(this.pinsPath, err);
      return { pins: emptyPins(), version: 'absent' };
    }
    try {
      const version = versionOf(await handle.stat());
      return { pins: await this.parseOpened(handle), version };
    } finally {
      await handle.close();
    }
  }

  /** The whole of pins.json through its open handle, checked; any failure is the store's error. */
  private async parseOpened(handle: Awaited<ReturnType<typeof open>>): Promise<PinsFile> {
    let text: string;
    try {
      text = await handle.readFile('utf8');
    } catch (err) {
      throw storeError(`cannot read ${this.pinsPath}: ${(err as Error).message}`);
    }
    return parseStore(this.pinsPath, text, PinsFileSchema) as PinsFile;
  }

  /** The index's digests when it parses, checks and is of `version`; else undefined (read pins.json). */
  private indexOf(version: string, read: () => string): PinDigests | undefined {
    let value: unknown;
    try {
      value = JSON.parse(read());
    } catch {
      return undefined;
    }
    return digestsFromIndex(value, version);
  }

  /** Writes pin-digests.json: `digests` as they are in the pins.json named by `version`. */
  async writeDigests(digests: PinDigests, version: string): Promise<void> {
    await writeJsonAtomic(this.digestsPath, { version: 1, of: version, servers: digests.servers });
  }

  /** Identifies the current pins.json content cheaply (for the gateway's watch). */
  async pinsVersion(): Promise<string> {
    try {
      return versionOf(await stat(this.pinsPath));
    } catch {
      return 'absent';
    }
  }

  /**
   * Read-modify-write of pins.json under the lock; `change` returns false to skip the write. Returns
   * the pins and the version of pins.json they are (its digests index written with it).
   */
  async updatePins(change: (pins: PinsFile) => boolean): Promise<{ pins: PinsFile; version: string }> {
    await mkdir(this.dir, { recursive: true });
    const release = await this.lock();
    try {
      const { pins, version: read } = await this.readPinsVersioned();
      if (!change(pins)) return { pins, version: read };
      const version = versionOf(await writeTextAtomic(this.pinsPath, pinsTextParts(pins)));
      // The index is a cache: a failed write leaves the old one, which names the old pins.json and is not used.
      await this.writeDigests(digestsOf(pins), version).catch(() => {});
      return { pins, version };
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

/**
 * pins.json's text, in pieces (a tool's pin each) so a large store is written without being one
 * string: indented like the other stores, but each definition on one line of JSON. Fully indented,
 * the nested schemas of the definitions make the file about 2.3 times larger (20 MB against 9 MB for
 * 5,000 tools) and every write and read of it slower; a pin's own fields stay one to a line.
 */
function* pinsTextParts(pins: PinsFile): Generator<string> {
  yield `{\n  "version": ${JSON.stringify(pins.version)},\n  "servers": {`;
  const servers = Object.keys(pins.servers);
  for (let i = 0; i < servers.length; i++) {
    const entry = pins.servers[servers[i]!]!;
    yield `${i === 0 ? '\n    ' : ',\n    '}${JSON.stringify(servers[i])}: {\n      "tools": {`;
    const tools = Object.keys(entry.tools);
    for (let j = 0; j < tools.length; j++) {
      const { definition, ...fields } = entry.tools[tools[j]!]!;
      let pin = `${j === 0 ? '\n        ' : ',\n        '}${JSON.stringify(tools[j])}: {`;
      for (const key of Object.keys(fields))
        pin += `\n          ${JSON.stringify(key)}: ${JSON.stringify(fields[key as keyof typeof fields])},`;
      yield `${pin}\n          "definition": ${JSON.stringify(definition)}\n        }`;
    }
    let end = tools.length === 0 ? '}' : '\n      }';
    if (entry.instructions !== undefined)
      end += `,\n      "instructions": ${JSON.stringify(entry.instructions, null, 2).replaceAll('\n', '\n      ')}`;
    yield `${end}\n    }`;
  }
  yield servers.length === 0 ? '}\n}\n' : '\n  }\n}\n';
}

const isTable = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The digests of a parsed pin-digests.json when it is well-formed and of `version`; else undefined.
 * Checked by hand rather than by a schema: the index is read at every start, and a schema's walk of
 * 5,000 entries (~60 ms) would cost more than it saves. Each pin must be what PinSchema says of its fields.
 */
function digestsFromIndex(value: unknown, version: string): PinDigests | undefined {
  if (!isTable(value) || value.version !== 1 || value.of !== version || !isTable(value.servers)) return undefined;
  const servers = nameMap<ServerPinDigests>();
  for (const server of Object.keys(value.servers)) {
    const entry = value.servers[server];
    if (!isTable(entry) || !isTable(entry.tools)) return undefined;
    const tools = nameMap<PinDigest>();
    for (const name of Object.keys(entry.tools)) {
      const pin = entry.tools[name];
      if (!isTable(pin)) return undefined;
      const { digest, approvedAt, by } = pin;
      if (typeof digest !== 'string' || !digest.startsWith('sha256:') || typeof approvedAt !== 'string') return undefined;
      if (by !== 'first-use' && by !== 'operator') return undefined;
      tools[name] = { digest, approvedAt, by };
    }
    if (entry.instructions === undefined) servers[server] = { tools };
    else {
      const instructions = InstructionsPinSchema.safeParse(entry.instructions);
      if (!instructions.success) return undefined;
      servers[server] = { tools, instructions: instructions.data };
    }
  }
  return { servers };
}

function storeError(message: string): GatewayError {
  return new GatewayError('MCPG_PIN_STORE_INVALID', message);
}
