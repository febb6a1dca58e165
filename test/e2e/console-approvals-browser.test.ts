// The console's "Pending approvals" in a real headless Chromium (Debian's `chromium`, driven by
// playwright-core): an agent's call that the rules hold for a person waits; the page shows it with
// its agent, tool and EXACT arguments — pretty-printed, markup in them shown as text, an invisible
// bidi control shown as [U+202E] — and its Approve button (a form with the CSRF token and the
// arguments' digest) lets it run once with exactly those arguments. The agent was given the page's
// link while it waited. A screenshot goes to dist/test-output/console/approvals.png.
// Skipped, saying why, only when /usr/bin/chromium is missing (.ci/run installs it).

import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openBrowser, SHOTS, skip, type Browser } from '../helpers/browser.js';
import { fixtureServer, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

describe('pending approvals in the console, in a real browser', { timeout: 120_000, skip }, () => {
  let dir: TempDir;
  let http: HttpGateway;
  let browser: Browser | undefined;
  let page: Page;
  const admin = makeToken();
  const agent = makeToken();

  before(async () => {
    dir = await tempDir('mcpgate-console-approvals-');
    const config = await writeConfig(dir, { g: fixtureServer('ledger-server') });
    const rules = await writeRules(dir, {
      agents: { bot: { allow: { servers: ['g'] }, tokens: [agent.hash], approve: { g: ['delete_*'] } } },
      admins: { alice: { tokens: [admin.hash] } },
    });
    // --sanitize off: the ledger's answer carries the arguments back byte for byte.
    http = await startHttpGateway({ config, args: ['--rules', rules, '--state', dir.file('state'), '--sanitize', 'off'] });
    browser = await openBrowser();
    ({ page } = browser);
  });

  after(async () => {
    await browser?.close();
    await http?.stop();
    await dir?.remove();
  });

  it('shows the waiting call with its exact arguments, and Approve runs it once with them', { timeout: 100_000 }, async () => {
    const base = http.base;
    await page.goto(`${base}/ui/login`);
    await page.fill('input[name=token]', admin.token);
    await Promise.all([page.waitForURL(`${base}/ui`), page.click('button[type=submit]')]);

    const { client } = await connectAgent(http.url, { token: agent.token });
    try {
      const args = {
        name: 'release/1.0',
        note: '<script>document.title="pwned"</script> & "quotes"',
        hidden: 'abc\u202edef',
        depth: { list: [1, 2, { k: null }] },
      };
      const progress: string[] = [];
      const call = client.callTool(
        { name: 'g__delete_branch', arguments: args },
        { onprogress: (p) => void progress.push(String(p.message)) },
      );
      const waiting = await http.gw.waitForLog(
        (l) => typeof l.approval === 'string' && /waits for an admin's approval/.test(String(l.msg)),
      );
      const id = String(waiting.approval);

      // The overview links to the page; the page lists the call (its live region picks it up).
      await Promise.all([page.waitForURL(`${base}/ui/approvals`), page.click('a[href="/ui/approvals"]')]);
      const section = page.locator(`section[data-approval="${id}"]`);
      await section.waitFor();
      assert.equal(await section.locator('.agent').textContent(), 'bot');
      assert.match(String(await section.locator('.tool').textContent()), /^g__delete_branch/);
      const shown = await section.locator('pre.arguments').textContent();
      assert.equal(shown, JSON.stringify(args, null, 2).replace('\u202e', '[U+202E]'));
      assert.equal(await page.locator('pre.arguments script').count(), 0, 'markup in the arguments stays text');
      assert.notEqual(await page.title(), 'pwned');
      await page.screenshot({ path: join(SHOTS, 'approvals.png'), fullPage: true });

      // The link the agent was given opens the same call.
      const link = progress.find((m) => m.includes('/ui/approvals/'));
      assert.ok(link !== undefined, JSON.stringify(progress));
      assert.ok(link.endsWith(`${base}/ui/approvals/${id}`), link);

      await Promise.all([page.waitForURL(/\/ui\/approvals\?done=/), section.locator('button.approve-call').click()]);
      assert.match(String(await page.locator('.notice').textContent()), new RegExp(`approved call ${id}`));
      assert.equal(textOf(await call), 'done delete_branch');
      const ledger = JSON.parse(textOf(await client.callTool({ name: 'g__ledger', arguments: {} }))) as {
        tool: string;
        arguments: unknown;
      }[];
      assert.deepEqual(ledger, [{ tool: 'delete_branch', arguments: args }]);
      await page.locator('#no-approvals').waitFor();
    } finally {
      await client.close();
    }
  });
});
