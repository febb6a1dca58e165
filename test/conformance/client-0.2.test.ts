// The official MCP conformance suite 0.2.0-alpha.12, client side (issue 19): the scenarios initialize,
// tools_call and sse-retry with mcpgate as the client of the suite's scenario servers
// (client-driver.ts puts an SDK agent in front of mcpgate), with baseline-0.2.0-alpha.12.yml. See harness.ts.

import { after, before, describe, it } from 'node:test';
import { tempDir, type TempDir } from '../helpers/gateway.js';
import { clientScenario, running, SUITE_MS } from './harness.js';

describe('conformance 0.2.0-alpha.12: client scenarios with mcpgate as the client', { timeout: SUITE_MS }, () => {
  let dir: TempDir | undefined;
  before(async () => (dir = await tempDir('mcpgate-conformance-client-')));
  after(async () => {
    for (const child of running) child.kill('SIGTERM');
    await dir?.remove();
  });

  for (const scenario of ['initialize', 'tools_call', 'sse-retry']) {
    it(scenario, { timeout: SUITE_MS }, () => clientScenario(dir!, '0.2.0-alpha.12', scenario));
  }
});
