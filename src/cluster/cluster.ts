// One worker's part in a cluster of mcpgate processes sharing a Redis: it records the
// sessions this worker holds, and for a request about a session it does not hold decides where
// it goes — forwarded once to a live owner (forward.ts), adopted here (no owner, a dead owner, an
// owner that cannot be reached, or Redis down), or unknown (404). It implements `ClusterLink`,
// the front's contract (link.ts), and is made by the composition root only with `--redis`.
// Besides the placement: `forwardTo` (a modern retry sent to the worker whose memory holds its waiting
// call, named in the sealed `requestState`), `workerId()` (`hostname:pid`, worker-id.ts), the sessions
// held here, the cluster metrics and `/status`'s `cluster`. A session's owner is remembered for one
// heartbeat, and the requests of one session that miss that memory together share one Redis lookup.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger.js';
import type { Registry } from '../observability/prometheus.js';
import type { RequestId } from '../wire/jsonrpc.js';
import { Directory, type StoredSession, type WorkerInfo } from './directory.js';
import type { RedisApprovalBoard } from './approval-board.js';
import { SignInCounts } from './sign-in-counts.js';
import { forward } from './forward.js';
import type { RedisQuotaCounters } from './redis-quota-counters.js';
import type { ClusterLink, Placement, SessionRecord } from './link.js';
import { ForwardIdSource, SeenForwards } from './forward-ids.js';
import {
  decodeIdentity,
  digest,
  FORWARD_DIGEST_HEADER,
  FORWARD_HEADER,
  FORWARD_ID_HEADER,
  FORWARD_IDENTITY_HEADER,
  FORWARD_SIG_HEADER,
  FORWARD_TS_HEADER,
  verify,
  type Identity,
  type RecordKind,
} from './signing.js';

/** Worker id `hostname:pid`, computed in the worker itself (never inherited across a fork). */
import { workerId } from './worker-id.js';

export { workerId };

/** What Redis says of a session and its owner (or that it cannot be asked, and what was read before). */
type Lookup =
  { redis: 'up'; stored: StoredSession | undefined; owner: WorkerInfo | undefined } | { redis: 'down'; stored: StoredSession | undefined };

/** placeOnce: another worker adopted the session first. */
const MOVED = Symbol('moved');

const EMPTY_DIGEST = digest('');

/** Sessions held elsewhere whose owner's address is remembered (the oldest is forgotten first). */
const MAX_CACHED_OWNERS = 10_000;

export interface ClusterOptions {
  /** redis:// or rediss:// URL (may carry a password: never logged). */
  redisUrl: string;
  /** --cluster-secret, or the host's key from the state directory (never agreed through Redis). */
  secret: string;
  /** http://HOST:PORT where other workers reach this one (known once the front listens). */
  address: () => string;
  sessionTtlMs: number;
  heartbeatMs?: number;
  /** The configuration version this worker runs (shown to every worker's status). */
  version: () => string;
  /** Another worker changed its configuration (reload, pin approval) and runs `version`. */
  onNudge: (from: string, version: string) => void;
  metrics: Registry;
  log: Logger;
  /** The policy's shared halves, made first (the gateway's quotas and approval desk are built on them): started and closed here. */
  quotas: RedisQuotaCounters;
  approvals: RedisApprovalBoard;
}

/** A live worker as `/status` shows it (`mcpgate status` reads it): its record, the heartbeat as an ISO time. */
export type WorkerStatus = Omit<WorkerInfo, 'heartbeat'> & { heartbeat: string };

export class Cluster implements ClusterLink {
  readonly id = workerId();
  private readonly heartbeatMs: number;
  private readonly held = new Map<string, StoredSession>();
  /**
   * Where sessions held elsewhere were last found (their record and owner's address), for one
   * heartbeat: a forwarded request then costs no Redis round trip. Bounded; an owner that cannot be
   * reached drops its entry (the request then looks again and adopts).
   */
  private readonly owners = new Map<string, { stored: StoredSession; address: string; until: number }>();
  /** Owners' liveness as last read from Redis, for one heartbeat (open forwards ask every second). */
  private readonly liveness = new Map<string, { until: number; alive: Promise<boolean> }>();
  /**
   * Redis lookups of a session's record and its owner's, in flight: the requests of one session
   * that miss the owner cache together (64 in flight when its entry expires) share one pair of
   * round trips. An entry lives only until its lookup settles.
   */
  private readonly lookups = new Map<string, Promise<Lookup>>();
  private readonly directory: Directory;
  /** The console's failed sign-ins, counted by every worker together. */
  readonly signIns: SignInCounts;
  private readonly secret: string;
  /** This worker's forward ids, and those of the others it has served (each forward is single-use). */
  private readonly forwardIds = new ForwardIdSource();
  private readonly seenForwards = new SeenForwards();
  private readonly forwarded;
  private readonly refusedRecords;
  /** Kinds of record already logged as refused (logged once each; the metric counts every one). */
  private readonly refusedLogged = new Set<RecordKind>();
  private readonly forwardSeconds;
  private readonly adoptions;
  /** The rules' limits counted by every worker together (the gateway falls back to its own while Redis is down). */
  readonly quotas: RedisQuotaCounters;

  /** The calls waiting for a person's approval and the decisions on them, shared with every worker (approval-board.ts). */
  readonly approvals: RedisApprovalBoard;

  constructor(private readonly o: ClusterOptions) {
    this.quotas = o.quotas;
    this.secret = o.secret;
    this.approvals = o.approvals;
    this.heartbeatMs = o.heartbeatMs ?? 1000;
    this.directory = new Directory({
      url: o.redisUrl,
      workerId: this.id,
      address: o.address,
      heartbeatMs: this.heartbeatMs,
      sessionTtlMs: o.sessionTtlMs,
      secret: o.secret,
      onRefused: (kind, key) => this.refusedRecord(kind, key),
      held: () => this.held,
      onState: () => undefined,
      version: o.version,
      onNudge: o.onNudge,
      log: o.log,
    });
    this.signIns = new SignInCounts(() => this.directory.connection, o.secret);
    const r = o.metrics;
    r.gauge({
      name: 'mcpgate_cluster_redis_up',
      help: "1 while this worker reaches the cluster's Redis; 0 while it serves locally and reconnects.",
      collect: () => (this.directory.isUp ? 1 : 0),
    });
    r.gauge({ name: 'mcpgate_cluster_sessions_held', help: 'Agent sessions this worker owns.', collect: () => this.held.size });
    this.forwarded = r.counter({
      name: 'mcpgate_cluster_forwarded_total',
      help: 'Requests forwarded to the worker that owns their session, by outcome (relayed, unreachable).',
      labels: ['outcome'],
    });
    this.forwardSeconds = r.histogram({
      name: 'mcpgate_cluster_forward_seconds',
      help: "Time from receiving a request to relaying the owner's last byte, for forwarded requests.",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    });
    this.refusedRecords = r.counter({
      name: 'mcpgate_cluster_records_refused_total',
      help: "Records read from Redis that were not signed with the cluster secret (forged, altered, stale, or another cluster's), treated as absent, by kind (worker, session, approval, decision).",
      labels: ['kind'],
    });
    this.adoptions = r.counter({
      name: 'mcpgate_cluster_adoptions_total',
      help: 'Agent sessions adopted from a dead or unreachable owner, or while Redis was down.',
      labels: ['why'],
    });
  }

  /** Connects to Redis (down is not fatal). */
  async start(): Promise<void> {
    await Promise.all([this.directory.start(), this.quotas.start(), this.approvals.start()]);
  }

  /** A record read from Redis failed its signature (the approval board's too): counted, logged once per kind. */
  refusedRecord(kind: RecordKind, key: string): void {
    this.refusedRecords.labels(kind).inc();
    if (this.refusedLogged.has(kind)) return;
    this.refusedLogged.add(kind);
    this.o.log.warn(
      `a ${kind} record in Redis is not signed with this worker's cluster secret: treated as absent (written by something other than a worker of this cluster, or by workers with another secret: every worker needs the same --cluster-secret, or the same --state directory on one host); further ones are only counted (mcpgate_cluster_records_refused_total)`,
      { kind, key: key.slice(0, 200) },
    );
  }

  isForwarded(req: IncomingMessage): boolean {
    return req.headers[FORWARD_HEADER] !== undefined;
  }

  acceptForward(req: IncomingMessage, path: string): Identity | string {
    const from = req.headers[FORWARD_HEADER];
    const at = req.headers[FORWARD_TS_HEADER];
    const sig = req.headers[FORWARD_SIG_HEADER];
    const identity = req.headers[FORWARD_IDENTITY_HEADER];
    const bodyDigest = req.headers[FORWARD_DIGEST_HEADER];
    const forwardId = req.headers[FORWARD_ID_HEADER];
    if (
      typeof from !== 'string' ||
      typeof at !== 'string' ||
      typeof sig !== 'string' ||
      typeof identity !== 'string' ||
      typeof bodyDigest !== 'string' ||
      typeof forwardId !== 'string'
    )
      return 'it lacks the forwarding headers';
    const session = req.headers['mcp-session-id'];
    if (Array.isArray(session)) return 'it names more than one session';
    // Only a POST has a body; anything else was signed with the empty body's digest.
    if (req.method !== 'POST' && bodyDigest !== EMPTY_DIGEST) return 'its body digest does not match its body';
    // Signed for this worker: one sent to another (or replayed to this one from another's) fails here.
    const why = verify(
      this.secret,
      {
        method: req.method ?? '',
        path,
        session: session ?? '',
        from,
        to: this.id,
        id: forwardId,
        at: Number(at),
        identity,
        digest: bodyDigest,
      },
      sig,
    );
    if (why !== undefined) return why;
    const who = decodeIdentity(identity);
    if (who === undefined) return 'it does not say which agent it speaks for';
    return this.seenForwards.accept(from, forwardId) ?? who;
  }

  refuseBody(req: IncomingMessage, body: string): string | undefined {
    return digest(body) === req.headers[FORWARD_DIGEST_HEADER] ? undefined : 'its body digest does not match its body';
  }

  async place(
    req: IncomingMessage,
    res: ServerResponse,
    session: string,
    who: Identity,
    body: string,
    id: RequestId | undefined,
  ): Promise<Placement> {
    const first = await this.placeOnce(req, res, session, who, body, id, true);
    if (first !== MOVED) return first;
    // Lost a race to adopt: the winner is the owner now, and a second look (its own) forwards there.
    const second = await this.placeOnce(req, res, session, who, body, id, false);
    return second === MOVED ? { kind: 'unknown' } : second;
  }

  /** The session's record and its owner's, from Redis; `shared`: joins a lookup of the same session in flight. */
  private lookup(session: string, shared: boolean): Promise<Lookup> {
    const running = shared ? this.lookups.get(session) : undefined;
    if (running !== undefined) return running;
    const fresh = (async (): Promise<Lookup> => {
      let stored: StoredSession | undefined;
      try {
        stored = await this.directory.session(session);
        if (stored === undefined) return { redis: 'up', stored, owner: undefined };
        return { redis: 'up', stored, owner: await this.directory.worker(stored.owner) };
      } catch {
        return { redis: 'down', stored };
      }
    })();
    if (shared) {
      this.lookups.set(session, fresh);
      void fresh.finally(() => {
        if (this.lookups.get(session) === fresh) this.lookups.delete(session);
      });
    }
    return fresh;
  }

  private async placeOnce(
    req: IncomingMessage,
    res: ServerResponse,
    session: string,
    who: Identity,
    body: string,
    id: RequestId | undefined,
    shared: boolean,
  ): Promise<Placement | typeof MOVED> {
    const started = performance.now();
    const agent = who.agent;
    const cached = this.owners.get(session);
    if (
      cached !== undefined &&
      cached.until > started &&
      cached.stored.agent === agent &&
      !this.isForwarded(req) &&
      (await this.ownerAlive(cached.stored.owner))
    ) {
      const outcome = await forward({
        req,
        res,
        address: cached.address,
        path: req.url ?? '/mcp',
        session,
        who,
        body,
        id,
        from: this.id,
        to: cached.stored.owner,
        ids: this.forwardIds,
        secret: this.secret,
        ownerAlive: () => this.ownerAlive(cached.stored.owner),
      });
      this.forwarded.labels(outcome).inc();
      if (outcome === 'relayed') {
        this.forwardSeconds.observe((performance.now() - started) / 1000);
        return { kind: 'answered' };
      }
      this.owners.delete(session);
    }
    if (!this.directory.isUp) return this.adopt(session, undefined, 'redis-down');
    const found = await this.lookup(session, shared);
    const stored = found.stored;
    if (found.redis === 'down' && stored === undefined) return this.adopt(session, undefined, 'redis-down');
    // Another agent's session is answered exactly like an unknown one.
    if (stored === undefined || stored.agent !== agent) return { kind: 'unknown' };
    // A forwarded request is never forwarded again: the sender took this worker for the owner.
    if (this.isForwarded(req) || stored.owner === this.id) return this.takeOver(session, stored, 'orphaned');
    if (found.redis === 'down') return this.adopt(session, stored, 'redis-down');
    const owner = found.owner;
    if (owner === undefined) return this.takeOver(session, stored, 'owner-dead');
    const path = req.url ?? '/mcp';
    const outcome = await forward({
      req,
      res,
      address: owner.address,
      path,
      session,
      who,
      body,
      id,
      from: this.id,
      to: stored.owner,
      ids: this.forwardIds,
      secret: this.secret,
      ownerAlive: () => this.ownerAlive(stored.owner),
    });
    this.forwarded.labels(outcome).inc();
    if (outcome === 'relayed') {
      if (this.owners.size >= MAX_CACHED_OWNERS) this.owners.delete(this.owners.keys().next().value!);
      this.owners.set(session, { stored, address: owner.address, until: performance.now() + this.heartbeatMs });
      this.forwardSeconds.observe((performance.now() - started) / 1000);
      return { kind: 'answered' };
    }
    this.o.log.warn('the worker that owns a session cannot be reached; adopting it', { session, worker: stored.owner });
    return this.takeOver(session, stored, 'owner-unreachable');
  }

  async forwardTo(
    worker: string,
    req: IncomingMessage,
    res: ServerResponse,
    who: Identity,
    body: string,
    id: RequestId | undefined,
  ): Promise<boolean> {
    if (worker === this.id || !this.directory.isUp) return false;
    const started = performance.now();
    const target = await this.directory.worker(worker).catch(() => undefined);
    if (target === undefined) return false;
    const named = req.headers['mcp-session-id'];
    const session = typeof named === 'string' ? named : '';
    const outcome = await forward({
      req,
      res,
      address: target.address,
      path: req.url ?? '/mcp',
      session,
      who,
      body,
      id,
      from: this.id,
      to: worker,
      ids: this.forwardIds,
      secret: this.secret,
      ownerAlive: () => this.ownerAlive(worker),
    });
    this.forwarded.labels(outcome).inc();
    if (outcome === 'unreachable') return false;
    this.forwardSeconds.observe((performance.now() - started) / 1000);
    return true;
  }

  /** Whether worker `id`'s record is live (its heartbeat runs); true when Redis cannot say. Cached for one heartbeat. */
  private ownerAlive(id: string): Promise<boolean> {
    const now = performance.now();
    const known = this.liveness.get(id);
    if (known !== undefined && known.until > now) return known.alive;
    for (const [key, entry] of this.liveness) if (entry.until <= now) this.liveness.delete(key);
    const alive = this.directory.isUp
      ? this.directory.worker(id).then(
          (w) => w !== undefined,
          () => true,
        )
      : Promise.resolve(true);
    this.liveness.set(id, { until: now + this.heartbeatMs, alive });
    return alive;
  }

  /** Takes the session over from its recorded owner; if another worker won the race, forwards there. */
  private async takeOver(session: string, stored: StoredSession, why: string): Promise<Placement | typeof MOVED> {
    let owner: string | undefined;
    try {
      owner = await this.directory.takeOver(session, stored);
    } catch {
      return this.adopt(session, stored, 'redis-down');
    }
    if (owner === undefined) return { kind: 'unknown' }; // ended meanwhile
    if (owner !== this.id) return MOVED;
    return this.adopt(session, stored, why);
  }

  private adopt(session: string, stored: StoredSession | undefined, why: string): Placement {
    this.adoptions.labels(why).inc();
    this.o.log.info('adopted an agent session from another worker', { session, why });
    const record: SessionRecord | undefined =
      stored === undefined ? undefined : { agent: stored.agent, capabilities: stored.capabilities, identified: stored.identified };
    return { kind: 'adopt', record };
  }

  sessionsElsewhere(): number | undefined {
    return this.directory.isUp ? this.directory.elsewhere : undefined;
  }

  /** This worker's configuration changed (to `version`): every other worker re-reads its own. */
  nudge(version: string): void {
    this.directory.nudge(version);
  }

  opened(session: string, record: SessionRecord): void {
    this.owners.delete(session);
    const stored = { ...record, owner: this.id };
    this.held.set(session, stored);
    this.directory.put(session, stored);
  }

  ended(session: string, forget: boolean): void {
    this.held.delete(session);
    if (forget) this.directory.drop(session);
  }

  async status(): Promise<Record<string, unknown>> {
    const redis = this.directory.isUp ? 'up' : 'down';
    let workers: WorkerStatus[] = [];
    if (this.directory.isUp) {
      try {
        workers = (await this.directory.workers()).map((w) => ({ ...w, heartbeat: new Date(w.heartbeat).toISOString() }));
      } catch {
        // Redis went away between the check and the read: the status says so below
      }
    }
    const elsewhere = this.sessionsElsewhere();
    return {
      worker: this.id,
      redis,
      sessions: this.held.size,
      cluster_sessions: elsewhere === undefined ? null : this.held.size + elsewhere,
      version: this.o.version(),
      sign_in_limit: this.signIns.shared ? 'shared' : 'per-worker',
      workers,
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.directory.close(), this.quotas.close(), this.approvals.close()]);
  }
}
