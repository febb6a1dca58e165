// The official MCP conformance suite 0.2.0-alpha.12, `--suite all`, server side (issue 19): against
// the suite's reference server behind mcpgate; baseline-0.2.0-alpha.12.yml lists what fails (the
// reference server's own failures, the 2026-07-28 revision). A 10 s per-scenario
// timeout (the suite's default is 30 s) keeps a hanging scenario from eating the test's budget.

import { after, before, describe, it } from 'node:test';
import { closeRig, openRig, serverScenarios, SUITE_MS, type Rig } from './harness.js';

describe('conformance 0.2.0-alpha.12: server scenarios through mcpgate', { timeout: SUITE_MS }, () => {
  let rig: Rig | undefined;
  before(async () => (rig = await openRig()), { timeout: SUITE_MS });
  after(() => closeRig(rig));

  it('every server scenario passes but the baseline (baseline-0.2.0-alpha.12.yml)', { timeout: SUITE_MS }, () =>
    serverScenarios(rig!, '0.2.0-alpha.12', ['--suite', 'all', '--timeout', '10000']));
});
