// `mcpgate serve`: run the gateway on stdio until the agent closes stdin, or over HTTP, until a
// signal arrives; then shut down gracefully (HTTP: stop accepting, let calls in flight finish, end
// the sessions; then the servers, seed 000). A second signal kills every server's process group at
// once; SIGHUP reloads both configuration files and revives parked servers.

import { Mcpgate, type HttpSettings, type McpgateOptions } from '../mcpgate.js';
import { installLastResort } from './last-resort.js';

export async function runServe(options: McpgateOptions, http?: HttpSettings): Promise<number> {
  const gate = await Mcpgate.create(options);
  const log = options.log;
  const uninstall = installLastResort(log, () => gate.destroy());
  let signals = 0;
  let resolveStop!: (why: string) => void;
  const stop = new Promise<string>((resolve) => (resolveStop = resolve));
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      log.warn(`second ${signal}: killing every server now`);
      gate.destroy();
      process.exit(1);
    }
    resolveStop(signal);
  };
  // SIGHUP revives every parked or backing-off server now (after its command or environment is fixed).
  const onHangup = (): void => void gate.hangup();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onHangup);
  let failed = false;
  try {
    if (http !== undefined) {
      await gate.serveHttp(http);
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
    uninstall();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onHangup);
  }
}
