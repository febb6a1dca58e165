// `mcpgate status` (cli/status.ts `render`) shows the rules' limits: whether they are counted by
// every worker together or on this worker alone (and why: Redis cannot be asked), and each counter
// with what it holds now.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { render } from '../../../src/cli/status.js';

const BASE = { url: 'http://127.0.0.1:8808/mcp', mode: 'aggregate', pins: 'tofu', servers: [] };

void describe('mcpgate status: limits', () => {
  void it("shows shared counters and each limit's count", { timeout: 5000 }, () => {
    const text = render({
      ...BASE,
      quotas: {
        counters: 'shared',
        local_checks: 0,
        limits: [
          { subject: 'ci-bot', rule: '$.agents["ci-bot"].limits', level: 'all', kind: 'calls', limit: 100, per: '1m', used: 42 },
          { subject: '*', rule: '$.limits.servers.github', level: 'server', kind: 'in_flight', limit: 8, used: 3 },
        ],
      },
    });
    assert.match(text, /^limits: counted by every worker together \(Redis\)$/m);
    assert.match(text, /^ {2}ci-bot {2}\$\.agents\["ci-bot"\]\.limits {2}42\/100 calls per 1m$/m);
    assert.match(text, /^ {2}every agent {2}\$\.limits\.servers\.github {2}3\/8 in flight$/m);
  });

  void it('says when each worker counts on its own because Redis cannot be asked', { timeout: 5000 }, () => {
    const text = render({
      ...BASE,
      quotas: {
        counters: 'local',
        note: "the cluster's Redis cannot be asked (Redis is down): each worker counts its own calls",
        local_checks: 7,
        limits: [],
      },
    });
    assert.match(
      text,
      /^limits: counted on this worker alone — the cluster's Redis cannot be asked \(Redis is down\): each worker counts its own calls; 7 check\(s\) made locally while Redis could not be asked$/m,
    );
  });

  void it('says nothing of limits when the rules have none', { timeout: 5000 }, () => {
    assert.doesNotMatch(render(BASE), /limits/);
  });
});
