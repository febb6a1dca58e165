// Tasks (MCP 2025-11-25, basic/utilities/tasks): an agent's task-augmented `tools/call` (with
// `params.task`) makes the server create a task and answer `{ task: { taskId, status, … } }`; the
// agent then follows it with `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`, and the
// server may send `notifications/tasks/status`. mcpgate records each task as the create result passes
// through, in a `TaskTable` (one per gateway), and sends `tasks/*` requests and
// `notifications/tasks/status` to the task's owner only. What a record holds, who owns a task, where
// the table lives and its bounds: src/gateway/README.md, "Tasks".

import { GatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { Connection } from '../../servers/connection.js';

/** Where a task lives and whose it is. */
interface TaskRecord {
  readonly publicId: string;
  readonly server: string;
  readonly serverTaskId: string;
  readonly owner: string;
  expiresAt: number;
  /**
   * The creating call's hold on its calls-in-flight limits: a task is the server's work until it is
   * terminal, so the hold ends then (`taskOver`), or when the record ends (its ttl), not at creation.
   */
  hold?: TaskHold | undefined;
}

/** A task's hold on its creating call's limits: ends once, whichever comes first. */
interface TaskHold {
  end(): void;
}

/** The statuses after which a task does no more work (2025-11-25 tasks). */
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** The `_meta` key a task's messages name their task by. */
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** Tasks remembered at once, in all and per owner (past that, the owner's oldest record is forgotten). */
const MAX_TASKS = 10_000;
const MAX_PER_OWNER = 1_000;
/** A task with no `ttl` (unlimited) is remembered this long; a `ttl` is honoured up to it. */
const MAX_KEEP_MS = 24 * 60 * 60 * 1000;
/** Kept past the task's ttl so a last `tasks/get` still finds the server's answer (expired or not). */
const GRACE_MS = 60_000;
/** Pages of one server's `tasks/list` read for one agent's `tasks/list`. */
const MAX_LIST_PAGES = 20;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class TaskTable {
  /** `owner\0publicId` → record, oldest first. */
  private readonly records = new Map<string, TaskRecord>();
  /** `server\0serverTaskId` → the records of that server task (pooled connections of one server may reuse an id). */
  private readonly byServerId = new Map<string, Set<TaskRecord>>();
  private readonly perOwner = new Map<string, number>();

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.records.size;
  }

  /** Records a task the server created for `owner`; returns its public id. */
  add(owner: string, server: string, serverTaskId: string, ttl: unknown): string {
    this.sweep();
    const publicId = `${server}:${serverTaskId}`;
    const keepMs = typeof ttl === 'number' && Number.isFinite(ttl) && ttl >= 0 ? Math.min(ttl + GRACE_MS, MAX_KEEP_MS) : MAX_KEEP_MS;
    const key = `${owner}\u0000${publicId}`;
    const old = this.records.get(key);
    if (old !== undefined) this.remove(key, old);
    if ((this.perOwner.get(owner) ?? 0) >= MAX_PER_OWNER || this.records.size >= MAX_TASKS) this.evictOldest(owner);
    const record: TaskRecord = { publicId, server, serverTaskId, owner, expiresAt: this.now() + keepMs };
    this.records.set(key, record);
    const serverKey = `${server}\u0000${serverTaskId}`;
    let set = this.byServerId.get(serverKey);
    if (set === undefined) this.byServerId.set(serverKey, (set = new Set()));
    set.add(record);
    this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1);
    return publicId;
  }

  /**
   * The creating call's hold on its limits passes to the owner's task `publicId` (created with
   * `status`): it ends once the task is terminal (`taskOver`) or its record ends. False, and nothing
   * held, when there is no such task or it is over already.
   */
  hold(owner: string, publicId: unknown, status: unknown, release: () => void): boolean {
    const record = typeof publicId === 'string' ? this.find(owner, publicId) : undefined;
    if (record === undefined || (typeof status === 'string' && TERMINAL.has(status))) return false;
    record.hold?.end();
    record.hold = holdFor(record, release, record.expiresAt - this.now());
    return true;
  }

  /** The owner's task of that public id (undefined: unknown to this owner, or expired). */
  find(owner: string, publicId: string): TaskRecord | undefined {
    const key = `${owner}\u0000${publicId}`;
    const record = this.records.get(key);
    if (record === undefined) return undefined;
    if (record.expiresAt > this.now()) return record;
    this.remove(key, record);
    return undefined;
  }

  /** Every live task of the owner. */
  ofOwner(owner: string): TaskRecord[] {
    this.sweep();
    return [...this.records.values()].filter((record) => record.owner === owner);
  }

  /** The records of one server task (its status notification goes to their owners). */
  ofServerTask(server: string, serverTaskId: string): readonly TaskRecord[] {
    const set = this.byServerId.get(`${server}\u0000${serverTaskId}`);
    return set === undefined ? [] : [...set].filter((record) => record.expiresAt > this.now());
  }

  private evictOldest(owner: string): void {
    const full = this.records.size >= MAX_TASKS;
    for (const [key, record] of this.records) {
      if (!full && record.owner !== owner) continue;
      this.remove(key, record);
      this.log.warn('forgot a task: too many remembered', {
        owner: record.owner,
        task: record.publicId,
        max: full ? MAX_TASKS : MAX_PER_OWNER,
      });
      return;
    }
  }

  /** Drops the expired records from the oldest until one is live (records are in creation order; ttls differ, so this is a bound, not exact). */
  private sweep(): void {
    const now = this.now();
    for (const [key, record] of this.records) {
      if (record.expiresAt > now) return;
      this.remove(key, record);
    }
  }

  private remove(key: string, record: TaskRecord): void {
    record.hold?.end();
    this.records.delete(key);
    const serverKey = `${record.server}\u0000${record.serverTaskId}`;
    const set = this.byServerId.get(serverKey);
    set?.delete(record);
    if (set?.size === 0) this.byServerId.delete(serverKey);
    const left = (this.perOwner.get(record.owner) ?? 1) - 1;
    if (left === 0) this.perOwner.delete(record.owner);
    else this.perOwner.set(record.owner, left);
  }
}

/** A hold that ends once: by `end`, or when the task's record would expire (a timer that keeps no process alive). */
function holdFor(record: TaskRecord, release: () => void, keepMs: number): TaskHold {
  const hold: TaskHold = {
    end() {
      if (record.hold !== hold) return;
      record.hold = undefined;
      clearTimeout(timer);
      release();
    },
  };
  const timer = setTimeout(() => hold.end(), keepMs).unref();
  return hold;
}

/**
 * What a server said of a task (a status notification, a `tasks/get` or `tasks/cancel` answer, or
 * `tasks/result`'s, which comes once the task is over): a terminal one ends the creating call's hold.
 */
export function taskOver(record: TaskRecord, method: string, status: unknown): void {
  if (method === 'tasks/result' || (typeof status === 'string' && TERMINAL.has(status))) record.hold?.end();
}

/**
 * A task-augmented call's create result: records the task for `owner` and names it by its public id
 * (in `task.taskId` and a related-task `_meta`). False when the result creates no task.
 */
export function recordCreatedTask(table: TaskTable, owner: string, server: string, result: Record<string, unknown>): boolean {
  const task = result.task;
  if (!isRecord(task) || typeof task.taskId !== 'string') return false;
  const publicId = table.add(owner, server, task.taskId, task.ttl);
  result.task = { ...task, taskId: publicId };
  renameRelatedTask(result, publicId);
  return true;
}

/** The agent's `params.taskId` → its task, or the error it gets (another owner's task is as unknown as a made-up one). */
export function taskOf(table: TaskTable, owner: string, method: string, taskId: unknown): TaskRecord | GatewayError {
  if (typeof taskId !== 'string') return new GatewayError('MCPG_INVALID_PARAMS', `${method} needs params.taskId (a string)`);
  return (
    table.find(owner, taskId) ??
    new GatewayError(
      'MCPG_INVALID_PARAMS',
      `unknown task: ${taskId} (a task is known only to the agent whose call created it through mcpgate, until its ttl ends)`,
      { detail: { taskId } },
    )
  );
}

/** A server's answer about a task (a Task, or `tasks/result`'s result) renamed to the task's public id. */
export function renameTaskAnswer(result: Record<string, unknown>, record: TaskRecord): boolean {
  let changed = false;
  if (result.taskId === record.serverTaskId) {
    result.taskId = record.publicId;
    changed = true;
  }
  return renameRelatedTask(result, record.publicId) || changed;
}

function renameRelatedTask(result: Record<string, unknown>, publicId: string): boolean {
  const meta = result._meta;
  if (!isRecord(meta) || !isRecord(meta[RELATED_TASK])) return false;
  result._meta = { ...meta, [RELATED_TASK]: { ...meta[RELATED_TASK], taskId: publicId } };
  return true;
}

/**
 * An agent's `tasks/list`: each server holding some of the owner's tasks is asked for its list (a
 * shared server lists every agent's tasks), and only the owner's tasks are kept, under their public
 * ids, in one page. `connect` gives the connection the owner's requests to a server go to.
 */
export async function listTasks(
  table: TaskTable,
  owner: string,
  connect: (server: string) => Connection | Promise<Connection> | undefined,
  log: Logger,
): Promise<Record<string, unknown>> {
  const byServer = new Map<string, Map<string, TaskRecord>>();
  for (const record of table.ofOwner(owner)) {
    let mine = byServer.get(record.server);
    if (mine === undefined) byServer.set(record.server, (mine = new Map<string, TaskRecord>()));
    mine.set(record.serverTaskId, record);
  }
  const lists = await Promise.all(
    [...byServer].map(async ([server, mine]) => {
      const tasks: Record<string, unknown>[] = [];
      try {
        const conn = await connect(server);
        if (conn === undefined) return tasks;
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const result = await conn.request('tasks/list', cursor === undefined ? {} : { cursor });
          for (const task of Array.isArray(result.tasks) ? (result.tasks as unknown[]) : []) {
            if (!isRecord(task) || typeof task.taskId !== 'string') continue;
            const record = mine.get(task.taskId);
            if (record !== undefined) tasks.push({ ...task, taskId: record.publicId });
          }
          cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
          if (cursor === undefined) break;
        }
      } catch (err) {
        log.warn("tasks/list: a server's list could not be read; its tasks are left out", {
          server,
          error: err instanceof Error ? err.message : String(err),
        });
      }
      return tasks;
    }),
  );
  return { tasks: lists.flat() };
}

/**
 * What mcpgate declares of tasks to agents: only what some ready server supports, and of requests
 * only `tools/call` (the one task-augmented request mcpgate routes); undefined when none does.
 */
export function tasksCapability(declared: Iterable<unknown>): Record<string, unknown> | undefined {
  let list = false;
  let cancel = false;
  let toolsCall = false;
  for (const tasks of declared) {
    if (!isRecord(tasks)) continue;
    list ||= tasks.list !== undefined;
    cancel ||= tasks.cancel !== undefined;
    const requests = tasks.requests;
    toolsCall ||= isRecord(requests) && isRecord(requests.tools) && requests.tools.call !== undefined;
  }
  if (!toolsCall) return undefined;
  return { ...(list && { list: {} }), ...(cancel && { cancel: {} }), requests: { tools: { call: {} } } };
}
