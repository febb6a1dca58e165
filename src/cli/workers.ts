// `mcpgate serve --http HOST:PORT --workers N`: the primary process. It forks N workers
// with node:cluster — each runs this same command line and is a whole gateway (its own servers,
// sessions and Redis link; worker id `hostname:pid`, computed in the worker) — and owns the shared
// port itself (handoff.ts): it reads each connection's first request head and hands the connection
// to the worker whose slot the session id names (the worker that opened the session), or, naming
// none, to the next worker in turn. Each worker is told its slot (0 … N-1, kept by its
// replacement) and the shared port in its environment, and also listens on a port of its own, which
// it records in Redis, so a request for a session another worker owns (an adopted session, a
// kept-alive connection reused for another session, another host) is forwarded to that worker
// (cluster/forward.ts) as between hosts.

// The primary runs no gateway. It supervises: a worker that dies unasked is forked again after a
// backoff (RESTART_MIN_MS doubling to RESTART_MAX_MS, reset once a worker has run STABLE_MS). It
// forwards SIGINT/SIGTERM (as SIGTERM: drain) and SIGHUP (reload) to every worker over the IPC
// channel (serve.ts ignores the OS's copies in workers), and on SIGTERM stops accepting and waits
// for all of them to drain and exit. A second signal hurries the workers' stops; a third kills them. A worker's
// stdio servers cannot outlive it: it stops them on its way out, and its watchdog kills their
// process groups if it dies hard (servers/process-groups.ts); if the primary dies hard, node:cluster
// ends every worker (the IPC channel closes), and so their watchdogs. It also answers the workers'
// requests for the whole host's `/metrics` (host-metrics.ts).

import cluster, { type Worker } from 'node:cluster';
import type { Socket } from 'node:net';
import type { Logger } from '../observability/logger.js';
import { Handoff, SHARED_PORT_ENV, WORKER_SLOT_ENV, type HandoffTarget } from './handoff.js';
import { HostScraper } from './host-metrics.js';
import { isWorkerMessage, type WorkerMessage } from './serve.js';

export const RESTART_MIN_MS = 100;
export const RESTART_MAX_MS = 10_000;
/** A worker that ran this long before dying is restarted after the shortest backoff again. */
export const STABLE_MS = 30_000;
/** Exit code of a worker refused at start (usage, invalid configuration): restarting cannot help. */
const EXIT_INVALID = 2;
/**
 * Connections a worker may have been sent and not yet acknowledged (the primary holds a copy of
 * each); past it the worker is passed over — a stopped worker cannot make the primary hold more.
 */
const MAX_UNACKNOWLEDGED = 256;

interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  listening: boolean;
  /** Consecutive quick deaths, for the backoff. */
  failures: number;
  restart: NodeJS.Timeout | undefined;
  /** How connections reach this slot's worker while it is ready. */
  target: HandoffTarget;
  /** Connections sent to this slot's worker and not yet acknowledged, by handoff id. */
  handed: Map<number, { socket: Socket; head: Buffer; failed: () => void }>;
}

/** `host`/`port`: the `--http` address, bound here and shared by the workers. */
export async function runPrimary(count: number, log: Logger, shared: { host: string; port: number }): Promise<number> {
  let handoffs = 0;
  const slots: Slot[] = Array.from({ length: count }, (_, index) => {
    const slot: Slot = {
      index,
      worker: undefined,
      startedAt: 0,
      listening: false,
      failures: 0,
      restart: undefined,
      handed: new Map(),
      target: {
        send: (head, socket, failed) => {
          const worker = slot.worker;
          if (worker === undefined || !worker.isConnected()) return failed();
          const id = ++handoffs;
          slot.handed.set(id, { socket, head, failed });
          // keepOpen: this copy stays until the worker acknowledges (then closed), so a worker that
          // dies before it has the connection does not take it along: it goes to another one.
          const undelivered = (err: Error | null): void => {
            if (err === null || !slot.handed.delete(id)) return;
            failed();
          };
          try {
            worker.send(
              { mcpgate: 'connection', id, head: head.toString('base64') } satisfies WorkerMessage,
              socket,
              { keepOpen: true },
              undelivered,
            );
          } catch (err) {
            undelivered(err instanceof Error ? err : new Error(String(err)));
          }
        },
        pending: () => slot.handed.size,
      },
    };
    return slot;
  });
  const ready = (slot: Slot | undefined): boolean =>
    slot?.listening === true && slot.worker?.isConnected() === true && slot.handed.size < MAX_UNACKNOWLEDGED;
  const handoff = new Handoff({
    worker: (index) => (ready(slots[index]) ? slots[index]!.target : undefined),
    ready: () => slots.filter(ready).map((s) => s.target),
    log,
  });
  let stopping = false;
  let signals = 0;
  let announced = false;
  let exitCode = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  const live = (): Worker[] => slots.flatMap((s) => (s.worker === undefined ? [] : [s.worker]));
  const tell = (worker: Worker, message: WorkerMessage): void => {
    if (worker.isConnected())
      worker.send(message, (err: Error | null) =>
        err === null ? undefined : log.debug('a worker could not be told', { error: err.message }),
      );
  };
  let restarts = 0;
  // /metrics on the shared port: the worker a scrape reaches asks here for every worker's samples.
  const scraper = new HostScraper({
    configured: count,
    restarts: () => restarts,
    handed: () => handoff.handed,
    log,
    members: () =>
      slots.flatMap((s) => {
        const worker = s.worker;
        const pid = worker?.process.pid;
        return worker === undefined || pid === undefined || !s.listening || !worker.isConnected()
          ? []
          : [{ pid, send: (m: WorkerMessage) => tell(worker, m) }];
      }),
  });
  const checkDone = (): void => {
    if (stopping && live().length === 0) resolveDone();
  };

  const fork = (slot: Slot): void => {
    slot.restart = undefined;
    if (stopping) return;
    const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot.index), [SHARED_PORT_ENV]: String(sharedPort) });
    slot.worker = worker;
    slot.startedAt = performance.now();
    slot.listening = false;
    worker.on('message', (m: unknown) => {
      if (!isWorkerMessage(m)) return;
      const pid = worker.process.pid ?? 0;
      if (m.mcpgate === 'scrape') {
        const id = m.id;
        return void scraper.scrape().then(
          (text) => tell(worker, { mcpgate: 'scraped', id, text }),
          (err: unknown) => tell(worker, { mcpgate: 'scraped', id, error: err instanceof Error ? err.message : String(err) }),
        );
      }
      if (m.mcpgate === 'accepted') {
        // The worker has the connection: the primary's copy goes (closing it ends nothing).
        const entry = slot.handed.get(m.id);
        slot.handed.delete(m.id);
        entry?.socket.destroy();
        return;
      }
      if (scraper.onMessage(pid, m) || m.mcpgate !== 'listening') return;
      slot.listening = true;
      if (!announced && slots.every((s) => s.listening)) {
        announced = true;
        log.info(`mcpgate listening on ${m.url} (${count} workers)`, { url: m.url, workers: count });
      }
    });
    worker.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      slot.worker = undefined;
      // Connections it never acknowledged are still whole here: they go to the other workers.
      const unacknowledged = [...slot.handed.values()];
      slot.handed.clear();
      for (const entry of unacknowledged) entry.failed();
      const pid = worker.process.pid;
      if (pid !== undefined) scraper.gone(pid);
      if (stopping) {
        if (code !== 0) exitCode = 1;
        log.info(`worker ${pid} exited`, { pid, code, signal });
        return checkDone();
      }
      if (code === EXIT_INVALID && !slot.listening) {
        // The configuration or command line is refused (the worker said why): every worker would be.
        log.error(`worker ${pid} refused to start (exit 2: usage or invalid configuration); stopping`, { pid });
        exitCode = EXIT_INVALID;
        return stopAll();
      }
      const ran = performance.now() - slot.startedAt;
      slot.failures = ran >= STABLE_MS ? 0 : slot.failures + 1;
      const delay = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** Math.max(0, slot.failures - 1));
      log.warn(`worker ${pid} died (${signal ?? `exit ${code}`}); starting another in ${delay} ms`, { pid, code, signal, delayMs: delay });
      slot.restart = setTimeout(() => {
        restarts++;
        fork(slot);
      }, delay);
    });
  };

  const stopAll = (): void => {
    stopping = true;
    handoff.close();
    for (const slot of slots) clearTimeout(slot.restart);
    for (const worker of live()) tell(worker, { mcpgate: 'signal', signal: 'SIGTERM' });
    checkDone();
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals === 1) {
      log.info(`shutting down (${signal}): draining ${live().length} workers`);
      return stopAll();
    }
    // Each further signal goes on to the workers: the second hurries their servers' stops, the third kills them.
    log.warn(`${signal} during shutdown: passing it on to ${live().length} workers`);
    for (const worker of live()) tell(worker, { mcpgate: 'signal', signal: 'SIGTERM' });
  };
  const onHangup = (): void => {
    for (const worker of live()) tell(worker, { mcpgate: 'signal', signal: 'SIGHUP' });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onHangup);
  let sharedPort = 0;
  try {
    try {
      sharedPort = (await handoff.listen(shared.host, shared.port)).port;
    } catch (err) {
      log.error(err instanceof Error ? err.message : String(err));
      return 1;
    }
    log.info(`starting ${count} workers`, { workers: count });
    for (const slot of slots) fork(slot);
    await done;
    if (exitCode === 0) log.info('shut down cleanly');
    else log.warn(`shut down (exit ${exitCode})`);
    return exitCode;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onHangup);
    handoff.close();
  }
}
