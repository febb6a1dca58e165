// The console's quotas page in a real headless Chromium (as console-browser.test.ts):
// an admin signs in and sees, per agent, each limit of the rules and what its counter holds now;
// the live region follows an agent's calls (calls counted in the window, calls in flight) without a
// reload. A screenshot goes to dist/test-output/console/quotas.png.
// Skipped, saying why, only when /usr/bin/chromium is missing (.ci/run installs it).

import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openBrowser, SHOTS, skip, type Browser } from '../helpers/browser.js';
import { fixtureServer, tempDir, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

describe('console: quotas in a real browser', { timeout: 120_000, skip }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  let browser: Browser | undefined;
  let page: Page;
  const admin = makeToken();
  const bot = makeToken();

  before(async () => {
    dir = await tempDir('mcpgate-console-quotas-');
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    // Windows are fixed and aligned to the epoch (policy/quota-window.ts): a day long, so that the
    // test's calls and the counts it reads fall in one window of each limit, whatever the time.
    const rules = await writeRules(dir, {
      admins: { alice: { tokens: [admin.hash] } },
      limits: { servers: { sink: { calls: 1000, per: '1d' } } },
      agents: {
        bot: {
          tokens: [bot.hash],
          allow: { servers: ['sink'] },
          limits: { calls: 3, per: '1d', tools: { sink: { slow: { inFlight: 1 } } } },
        },
      },
    });
    gate = await startHttpGateway({ config, args: ['--rules', rules] });
    browser = await openBrowser();
    ({ page } = browser);
  });

  after(async () => {
    await browser?.close();
    await gate?.stop();
    await dir?.remove();
  });

  it("shows each agent's limits and live counts, following its calls", { timeout: 100_000 }, async () => {
    const base = gate.base;
    const cspErrors: string[] = [];
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text());
    });
    await page.goto(`${base}/ui/login`);
    await page.fill('input[name=token]', admin.token);
    await Promise.all([page.waitForURL(`${base}/ui`), page.click('button[type=submit]')]);
    await Promise.all([page.waitForURL(`${base}/ui/quotas`), page.click('nav a[href="/ui/quotas"]')]);

    assert.match(await page.locator('#quota-counters').innerText(), /counted on this worker alone/);
    const used = (rule: string, kind: string): ReturnType<Page['locator']> =>
      page.locator(`tr[data-rule="${rule}"][data-kind="${kind}"] td.used`);
    assert.equal(await used('$.agents.bot.limits', 'calls').innerText(), '0');
    assert.match(await page.locator('h3[data-subject="bot"] + table').innerText(), /3 calls per 1d[\s\S]*1 in flight/);
    assert.match(await page.locator('h3[data-subject="*"]').innerText(), /every agent together/);

    const agent = await connectAgent(gate.url, { token: bot.token });
    try {
      await agent.client.callTool({ name: 'sink__echo', arguments: { text: 'one' } });
      await agent.client.callTool({ name: 'sink__echo', arguments: { text: 'two' } });
      // The live region follows without a reload.
      await page.locator('tr[data-rule="$.agents.bot.limits"][data-kind="calls"] td.used', { hasText: /^2$/ }).waitFor({ timeout: 20_000 });
      assert.equal(await used('$.limits.servers.sink', 'calls').innerText(), '2');
      const abort = new AbortController();
      const slow = agent.client.callTool({ name: 'sink__slow', arguments: { ms: 60_000 } }, { signal: abort.signal });
      await page
        .locator('tr[data-rule="$.agents.bot.limits.tools.sink.slow"][data-kind="in_flight"] td.used', { hasText: /^1$/ })
        .waitFor({ timeout: 20_000 });
      await page.screenshot({ path: join(SHOTS, 'quotas.png'), fullPage: true });
      abort.abort();
      await assert.rejects(slow);
      await page
        .locator('tr[data-rule="$.agents.bot.limits.tools.sink.slow"][data-kind="in_flight"] td.used', { hasText: /^0$/ })
        .waitFor({ timeout: 20_000 });
      // The agent's window is full after the slow call: the count shows it, marked.
      await page
        .locator('tr[data-rule="$.agents.bot.limits"][data-kind="calls"] td.used.problem', { hasText: /^3$/ })
        .waitFor({ timeout: 20_000 });
    } finally {
      await agent.client.close();
    }
    assert.deepEqual(cspErrors, [], 'the page broke its own Content-Security-Policy');
  });
});
