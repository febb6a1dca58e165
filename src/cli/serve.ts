// `mcpgate serve`: run the gateway on stdio until the agent closes stdin, or over HTTP, until a
// signal arrives; then shut down gracefully (HTTP: stop accepting, let calls in flight finish, end
// the sessions; then the servers, each stopped as the MCP spec asks). A signal during that
// shutdown cuts it short: every server's group is SIGTERMed now and SIGKILLed within
// HURRY_GRACE_MS, because an agent that closed our stdin and then signals us (the SDK's stdio
// client: EOF, 2 s, SIGTERM, 2 s, SIGKILL) will SIGKILL us next. One more signal kills every group
// at once and exits.
// SIGHUP reloads both configuration files and revives parked servers.

// As one of `--workers N` (a node:cluster worker, workers.ts), the signals come from the primary
// over the IPC channel, not from the OS: a terminal's ^C or a service manager's group-wide SIGTERM
// reaches every process of the group at once, and each worker would take it twice. The OS signals
// are ignored; the primary forwards each one it gets.

import { Socket } from 'node:net';
import { Mcpgate, type HttpSettings, type McpgateOptions } from '../mcpgate.js';
import { installLastResort } from './last-resort.js';
import { HostScrapeClient, samplesMessage, type ScrapeMessage } from './host-metrics.js';
import { releaseYoungGenerationWhen } from './start-up-heap.js';

/** After a signal during shutdown: SIGTERM now, SIGKILL this much later (well inside a client's 2 s). */
export const HURRY_GRACE_MS = 1000;

/** A message between the primary of `--workers N` and a worker (workers.ts). */
export type WorkerMessage =
  | { mcpgate: 'listening'; url: string }
  | { mcpgate: 'signal'; signal: NodeJS.Signals }
  /** A connection of the shared port (sent with the socket), and the bytes the primary read from it, base64. */
  | { mcpgate: 'connection'; id: number; head: string }
  /** The worker has connection `id`: the primary closes its copy. */
  | { mcpgate: 'accepted'; id: number }
  | ScrapeMessage;

export function isWorkerMessage(m: unknown): m is WorkerMessage {
  return typeof m === 'object' && m !== null && typeof (m as { mcpgate?: unknown }).mcpgate === 'string';
}

const ignore = (): void => undefined;

/** To the primary over IPC; a closed channel (the primary is gone) is not an error worth a crash. */
function toPrimary(m: WorkerMessage): void {
  if (process.connected) process.send?.(m, undefined, undefined, ignore);
}

export async function runServe(options: McpgateOptions, http?: HttpSettings, asWorker = false, stdioToo = false): Promise<number> {
  const gate = await Mcpgate.create(options, http?.cluster);
  releaseYoungGenerationWhen(gate.gateway.settled);
  const log = options.log;
  const uninstall = installLastResort(log, () => gate.destroy());
  let shuttingDown = false;
  let hurried = false;
  let resolveStop!: (why: string) => void;
  const stop = new Promise<string>(
    (resolve) =>
      (resolveStop = (why) => {
        shuttingDown = true;
        resolve(why);
      }),
  );
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!shuttingDown) return resolveStop(signal);
    if (!hurried) {
      hurried = true;
      log.warn(`${signal} during shutdown: stopping every server now (SIGTERM, then SIGKILL within ${HURRY_GRACE_MS} ms)`);
      gate.hurry(HURRY_GRACE_MS);
      return;
    }
    log.warn(`another ${signal}: killing every server now`);
    gate.destroy();
    process.exit(1);
  };
  // SIGHUP revives every parked or backing-off server now (after its command or environment is fixed).
  const onHangup = (): void => void gate.hangup();
  // /metrics on the shared port asks the primary for every worker's samples (host-metrics.ts).
  const scrapes =
    asWorker && http !== undefined
      ? new HostScrapeClient((m) => {
          if (!process.connected) throw new Error('the IPC channel to the primary is closed');
          toPrimary(m);
        })
      : undefined;
  const fromPrimary = (m: unknown, handle: unknown): void => {
    if (!isWorkerMessage(m) || scrapes?.onMessage(m) === true) return;
    if (m.mcpgate === 'connection') {
      if (!(handle instanceof Socket)) return;
      // Acknowledged before anything is read from it: until then the primary may hand it elsewhere.
      toPrimary({ mcpgate: 'accepted', id: m.id });
      gate.accept(handle, Buffer.from(m.head, 'base64'));
      return;
    }
    if (m.mcpgate === 'collect') {
      toPrimary(samplesMessage(m.id, gate.gateway.metrics.render()));
      return;
    }
    if (m.mcpgate !== 'signal') return;
    if (m.signal === 'SIGHUP') onHangup();
    else onSignal(m.signal);
  };
  if (asWorker) {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, ignore);
    process.on('message', fromPrimary);
  } else {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('SIGHUP', onHangup);
  }
  let failed = false;
  try {
    if (http !== undefined) {
      const { url } = await gate.serveHttp(scrapes === undefined ? http : { ...http, hostMetrics: () => scrapes.ask() });
      if (asWorker) process.send?.({ mcpgate: 'listening', url } satisfies WorkerMessage);
      // `--stdio --http`: the stdio agent's end ends the process, as on stdio alone.
      if (stdioToo) {
        void gate.attachStdio().then((end) => {
          failed = end.failed;
          resolveStop(end.reason);
        });
      }
    } else {
      const { ended } = gate.serveStdio();
      void ended.then((end) => {
        failed = end.failed;
        resolveStop(end.reason);
      });
    }
    const why = await stop;
    log.info(`shutting down (${why})`);
    await gate.close();
    log.info('shut down cleanly');
    // The agent stopped reading (stdio): a runtime failure, not the agent's goodbye.
    return failed ? 1 : 0;
  } finally {
    scrapes?.close();
    uninstall();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onHangup);
    process.off('message', fromPrimary);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(signal, ignore);
  }
}
