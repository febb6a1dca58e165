// The official MCP conformance suite 0.1.16, server side (issue 19): every server scenario passes
// against the suite's reference server behind mcpgate (unprefixed entry, Streamable HTTP, no renaming
// proxy); baseline-0.1.16.yml lists what may fail (nothing on the server side). See harness.ts.

import { after, before, describe, it } from 'node:test';
import { closeRig, openRig, serverScenarios, SUITE_MS, type Rig } from './harness.js';

describe('conformance 0.1.16: server scenarios through mcpgate', { timeout: SUITE_MS }, () => {
  let rig: Rig | undefined;
  before(async () => (rig = await openRig()), { timeout: SUITE_MS });
  after(() => closeRig(rig));

  it('every server scenario passes (baseline-0.1.16.yml)', { timeout: SUITE_MS }, () => serverScenarios(rig!, '0.1.16'));
});
