// Loaded into the gateway process with `--import` by bench/call-path.ts: V8's precise coverage with
// call counts, taken (and reset) on each SIGUSR2 and written, for the gateway's own files only, to
// `$MCPGATE_CALL_PATH_OUT.<n>`. Nothing else in the process knows it is there.

import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

const out = process.env.MCPGATE_CALL_PATH_OUT;
if (out !== undefined) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  let taken = 0;
  process.on('SIGUSR2', () => {
    void session.post('Profiler.takePreciseCoverage').then(({ result }) => {
      const ours = result.filter((script) => script.url.includes('/dist/src/'));
      writeFileSync(`${out}.${taken++}`, JSON.stringify(ours));
    });
  });
}
