// The gateway's side of pinning: reviews each server's tools against the store (store.ts), pins on
// first use (tofu), publishes what it holds back to held.json for the operator, and notices
// approvals written by `mcpgate approve` (it checks the store twice a second) so held tools are
// released within a second. A store that cannot be read is reported and treated as "nothing
// approved": it never releases anything. A review names its source (`check(…, source)`: '' for the
// server's own connection, a pool scope for a pooled one); what each source holds is kept apart and
// held.json shows their union, so one connection's review never releases what another holds. How it
// stays small and starts early: the room's README, "The keeper".

import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { review, type PinMode, type Review } from './review.js';
import {
  PinStore,
  digestsOf,
  emptyHeld,
  nameMap,
  serverDigestsOf,
  type DigestsRead,
  type HeldFile,
  type PinDigests,
  type PinsFile,
  type ServerHeld,
  type ServerPinDigests,
  type ServerPins,
} from './store.js';
import { changes, type ToolDefinition } from './digest.js';
import { isSkillPin } from './skill-pins.js';

const WATCH_INTERVAL_MS = 500;

interface KeeperOptions {
  mode: PinMode;
  dir: string;
  log: Logger;
  /** Called after approvals (or the store) changed on disk: every server must be reviewed again. */
  onStoreChanged: () => void;
}

export class PinKeeper {
  readonly store: PinStore;
  /** Every pin's digest, never its definition (a second copy of the catalog); undefined while the store is unusable. */
  private pins: PinDigests | undefined;
  /** The approved definitions of the tools held against a pin (read from pins.json), for the console's diff. */
  private readonly heldPinned = new Map<string, Map<string, ToolDefinition>>();
  private storeError: GatewayError | undefined;
  private readonly held: HeldFile = emptyHeld();
  private version = '';
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private closed = false;
  /**
   * What each source holds of each server: '' is the server's shared (or catalog) connection, any
   * other source a pooled connection's scope. held.json shows their union.
   */
  private readonly heldBySource = new Map<string, Map<string, Review>>();
  /** Told after approvals (or the store) changed on disk and were loaded (the composition root's config version). */
  private readonly observers = new Set<() => void>();
  /** Serializes reviews and held.json writes, so concurrent refreshes never interleave their writes. */
  private queue: Promise<unknown> = Promise.resolve();
  /** First-use records waiting for the next write of pins.json, and that write. */
  private batch: Map<string, ServerPins> | undefined;
  private batchWritten: Promise<ReadonlySet<string>> | undefined;
  /** The writes of pins.json, one after another. */
  private writes: Promise<unknown> = Promise.resolve();
  /** Writes of pins.json under way: the watch does not take them for someone else's change. */
  private writing = 0;

  constructor(private readonly options: KeeperOptions) {
    this.store = new PinStore(options.dir);
  }

  get mode(): PinMode {
    return this.options.mode;
  }

  get dir(): string {
    return this.options.dir;
  }

  /**
   * Reads the store. Reviews asked for meanwhile wait for it (they queue behind it), so the gateway
   * can start its servers without waiting: their boot overlaps the reading of a large pins.json.
   */
  start(): Promise<void> {
    if (this.options.mode === 'off') return Promise.resolve();
    const started = (async () => {
      // The next turn of the event loop: what the caller starts now (the servers' spawns) goes first.
      await new Promise((resolve) => setImmediate(resolve));
      await this.load(true);
      await this.loadHeld();
      if (this.closed) return;
      this.timer = setInterval(() => void this.poll(), WATCH_INTERVAL_MS);
      this.timer.unref();
    })();
    this.queue = this.queue.then(() => started).catch(() => {});
    return started;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  /**
   * Reviews one server's current tools and instructions; pins on first use; records what is held.
   * `source`: who listed them — '' the server's own connection, else a pool scope whose connection
   * lists the server for its owners only; what each source holds is recorded apart, shown as one.
   */
  check(server: string, tools: readonly Record<string, unknown>[], instructions: string | undefined, source = ''): Promise<Review> {
    const run = this.queue.then(() => this.runCheck(server, tools, instructions, source));
    this.queue = run.catch(() => {});
    // The next review need not wait for this one's pins to be written; this caller does. Pins found
    // on disk meanwhile (another gateway's) stand: the tools are reviewed again against them.
    return run.then(async ({ result, written }) =>
      (await written).has(server) ? this.check(server, tools, instructions, source) : result,
    );
  }

  /** The approved pin of one tool, as last read from the store. */
  pinOf(server: string, tool: string): { digest: string; by: string; approvedAt: string } | undefined {
    const pin = this.pins?.servers[server]?.tools[tool];
    return pin === undefined ? undefined : { digest: pin.digest, by: pin.by, approvedAt: pin.approvedAt };
  }

  /** What this gateway holds of one server now (definitions and digests), for the console. */
  heldOf(server: string): ServerHeld | undefined {
    return this.held.servers[server];
  }

  /** The approved definition of one held tool, for its diff (undefined: not held against a pin, never approved, or the store is unreadable). */
  pinnedDefinition(server: string, tool: string): ToolDefinition | undefined {
    return this.pins?.servers[server]?.tools[tool] === undefined ? undefined : this.heldPinned.get(server)?.get(tool);
  }

  /**
   * The server's connection (or the pool scope's, `source`) is gone: it holds nothing any more. Not
   * at shutdown: what was held stays in held.json, so `mcpgate approve` works with no gateway running.
   */
  forget(server: string, source = ''): void {
    if (this.closed || this.options.mode === 'off' || this.heldBySource.get(server)?.has(source) !== true) return;
    const nothing: Review = { held: new Map(), pinNow: new Map(), instructionsHeld: undefined, pinInstructionsNow: undefined };
    this.queue = this.queue.then(() => this.record(server, nothing, source)).catch(() => {});
  }

  private async runCheck(
    server: string,
    tools: readonly Record<string, unknown>[],
    instructions: string | undefined,
    source: string,
  ): Promise<{ result: Review; written: Promise<ReadonlySet<string>> }> {
    const mode = this.options.mode;
    const done = Promise.resolve(new Set<string>());
    if (mode === 'off') return { result: review('off', undefined, tools, instructions), written: done };
    // An unreadable store approves nothing: everything is held until it is fixed.
    if (this.pins === undefined)
      return { result: await this.record(server, review('strict', undefined, tools, instructions), source), written: done };
    const pins = this.pins.servers[server];
    const result = review(mode, pins, tools, instructions);
    await this.describeHeld(server, pins, result);
    if (result.pinNow.size > 0 || result.pinInstructionsNow !== undefined || (mode === 'tofu' && this.pins.servers[server] === undefined)) {
      const now = new Date().toISOString();
      const record: PinsFile['servers'][string] = { tools: nameMap() };
      for (const [name, pin] of result.pinNow) record.tools[name] = { ...pin, approvedAt: now, by: 'first-use' };
      if (result.pinInstructionsNow !== undefined) record.instructions = { ...result.pinInstructionsNow, approvedAt: now, by: 'first-use' };
      // Pinned as seen: nothing of it is held (no second review of the same definitions).
      this.pins.servers[server] = serverDigestsOf(record);
      if (result.pinNow.size > 0)
        this.options.log.debug(`pinned ${result.pinNow.size} tool definition(s) of server "${server}" on first use`, { server });
      const pinned: Review = { held: new Map(), pinNow: new Map(), instructionsHeld: undefined, pinInstructionsNow: undefined };
      return { result: await this.record(server, pinned, source), written: this.pinFirstUse(server, record) };
    }
    return { result: await this.record(server, result, source), written: done };
  }

  /**
   * Writes a first-use record to pins.json. Servers that become ready while a write is under way
   * join the next write: a start-up of many servers rewrites the store a few times, not once per
   * server (each write reads, checks and rewrites the whole file).
   */
  private pinFirstUse(server: string, record: ServerPins): Promise<ReadonlySet<string>> {
    if (this.batch === undefined) {
      const batch = (this.batch = new Map<string, ServerPins>());
      this.batchWritten = this.writes.then(() => this.writeBatch(batch));
      this.writes = this.batchWritten.catch(() => {});
    }
    this.batch.set(server, record);
    return this.batchWritten!;
  }

  /** Writes a batch of first uses; returns the servers someone else had pinned meanwhile (theirs stand). */
  private async writeBatch(batch: Map<string, ServerPins>): Promise<ReadonlySet<string>> {
    if (this.batch === batch) this.batch = undefined;
    const theirs = new Set<string>();
    this.writing += 1;
    try {
      const { pins, version } = await this.store.updatePins((file) => {
        let changed = false;
        for (const [server, record] of batch) {
          // Someone pinned it meanwhile (another gateway, an operator): theirs stands.
          if (file.servers[server] !== undefined) theirs.add(server);
          else {
            file.servers[server] = record;
            changed = true;
          }
        }
        return changed;
      });
      this.version = version;
      // The store as written, and the first uses still waiting for the next write.
      for (const [server, record] of this.batch ?? []) pins.servers[server] = record;
      this.pins = digestsOf(pins);
    } finally {
      this.writing -= 1;
    }
    return theirs;
  }

  /**
   * The review saw only digests: each tool held against a pin gets its changes from the approved
   * definition, read from pins.json now (only when something is held), and that definition is kept
   * for the console's diff while the tool is held.
   */
  private async describeHeld(server: string, pins: ServerPinDigests | undefined, result: Review): Promise<void> {
    const against = [...result.held].filter(([name]) => pins?.tools[name] !== undefined);
    if (against.length === 0) return;
    let approved: ServerPins | undefined;
    try {
      approved = (await this.store.readPins()).servers[server];
    } catch (err) {
      this.options.log.warn(
        `could not read the approved definitions of server "${server}" for the diff: ${err instanceof Error ? err.message : String(err)}`,
        { server },
      );
    }
    let kept = this.heldPinned.get(server);
    if (kept === undefined) this.heldPinned.set(server, (kept = new Map<string, ToolDefinition>()));
    for (const [name, info] of against) {
      const definition = approved?.tools[name]?.definition;
      if (definition === undefined) continue;
      kept.set(name, definition);
      info.changes = changes(definition, info.definition);
    }
  }

  /** Keeps held.json in step with what this gateway holds for `server` (every source's, `result` being `source`'s). */
  private async record(server: string, result: Review, source: string): Promise<Review> {
    let sources = this.heldBySource.get(server);
    if (result.held.size > 0 || result.instructionsHeld !== undefined) {
      if (sources === undefined) this.heldBySource.set(server, (sources = new Map<string, Review>()));
      sources.set(source, result);
    } else if (sources !== undefined) {
      sources.delete(source);
      if (sources.size === 0) this.heldBySource.delete(server);
    }
    const previous = this.held.servers[server];
    const now = new Date().toISOString();
    const next: HeldFile['servers'][string] = { tools: nameMap() };
    // This source's definitions last: a tool held by two sources shows the one just reviewed.
    const held = [...(sources?.values() ?? [])].filter((r) => r !== result);
    if (sources?.get(source) === result) held.push(result);
    for (const one of held) {
      for (const [name, info] of one.held) {
        const before = previous?.tools[name];
        next.tools[name] = { ...info, since: before?.digest === info.digest ? before.since : now };
      }
      if (one.instructionsHeld !== undefined) {
        const before = previous?.instructions;
        next.instructions = { ...one.instructionsHeld, since: before?.digest === one.instructionsHeld.digest ? before.since : now };
      }
    }
    // The approved definitions kept for diffs: only of tools some source still holds.
    const pinned = this.heldPinned.get(server);
    if (pinned !== undefined) for (const name of [...pinned.keys()]) if (next.tools[name] === undefined) pinned.delete(name);
    if (pinned?.size === 0) this.heldPinned.delete(server);
    const empty = Object.keys(next.tools).length === 0 && next.instructions === undefined;
    if (empty && previous === undefined) return result;
    if (empty) delete this.held.servers[server];
    else this.held.servers[server] = next;
    if (JSON.stringify(previous) !== JSON.stringify(empty ? undefined : next)) {
      for (const [name, info] of result.held) {
        if (previous?.tools[name]?.digest !== info.digest)
          this.options.log.warn(
            `holding ${isSkillPin(name) ? 'skill' : 'tool'} "${name}" of server "${server}" (${info.changes.join(', ')}) until an operator approves it: mcpgate approve ${server} ${name} --state ${this.dir}`,
            { server },
          );
      }
      await this.publishHeld();
    }
    return result;
  }

  private async publishHeld(): Promise<void> {
    if (this.closed) return;
    this.held.updatedAt = new Date().toISOString();
    try {
      await this.store.writeHeld(this.held);
    } catch (err) {
      this.options.log.error('could not write held.json', { error: err });
    }
  }

  /**
   * What the last gateway on this state directory held (held.json survives it): kept until each
   * server is reviewed again, so a server that is slow to start, or fails, keeps its held tools shown
   * and approvable. An unreadable file is started afresh (it only lists what is held, never approves).
   */
  private async loadHeld(): Promise<void> {
    try {
      const held = await this.store.readHeld();
      for (const server of Object.keys(held.servers)) this.held.servers[server] = held.servers[server]!;
    } catch (err) {
      this.options.log.warn(`held.json could not be read; it is written afresh: ${err instanceof Error ? err.message : String(err)}`, {
        file: this.store.heldPath,
      });
    }
  }

  /** `now`: one blocking read (at start, while the servers boot), else read piece by piece. */
  private async load(now = false): Promise<void> {
    try {
      const read = now ? this.store.readDigestsNow() : await this.store.readDigests();
      this.pins = read.digests;
      this.version = read.version;
      if (!read.indexed) this.index(read);
      if (this.storeError !== undefined) this.options.log.info('the pin store is readable again', { file: this.store.pinsPath });
      this.storeError = undefined;
    } catch (err) {
      this.pins = undefined;
      this.storeError = err instanceof GatewayError ? err : new GatewayError('MCPG_PIN_STORE_INVALID', String(err));
      this.options.log.error(`pin store unusable; every tool is held until it is fixed: ${this.storeError.message}`, {
        file: this.store.pinsPath,
      });
    }
  }

  /**
   * Writes the digests index for the pins.json just read whole, in the line of the store's writes (a
   * cache: a failed write leaves a stale index, which is not used).
   */
  private index(read: DigestsRead): void {
    this.writes = this.writes
      .then(() => this.store.writeDigests(read.digests, read.version))
      .catch((err: unknown) =>
        this.options.log.debug('could not write the pin digests index', { file: this.store.digestsPath, error: err }),
      );
  }

  /** Calls `listener` each time a change of the store on disk has been loaded. */
  observe(listener: () => void): void {
    this.observers.add(listener);
  }

  /** Looks at the store now rather than at the next poll (another worker of a cluster said it changed). */
  recheck(): Promise<void> {
    return this.options.mode === 'off' ? Promise.resolve() : this.poll();
  }

  private async poll(): Promise<void> {
    if (this.polling || this.closed || this.writing > 0) return;
    this.polling = true;
    try {
      const version = await this.store.pinsVersion();
      if (version === this.version) return;
      await this.load();
      if (!this.closed) {
        this.options.onStoreChanged();
        for (const listener of this.observers) listener();
      }
    } finally {
      this.polling = false;
    }
  }
}
