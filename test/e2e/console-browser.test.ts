// The console in a real headless Chromium (Debian's `chromium`, driven by playwright-core):
// sign in, see the parked server and revive it once its command works, see a held tool's diff,
// approve it, and watch a connected agent receive list_changed and call it; a request without the
// CSRF token and one without a login are refused. Screenshots of the main pages go to
// dist/test-output/console/ (docs/console-*.png are copies of them).
// Skipped, saying why, only when /usr/bin/chromium is missing (.ci/run installs it).

import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { openBrowser, SHOTS, skip, type Browser } from '../helpers/browser.js';
import { until } from '../helpers/gateway.js';
import { connectAgent } from '../helpers/http.js';
import { startConsoleRig, type ConsoleRig } from '../helpers/console.js';

describe('console in a real browser', { timeout: 120_000, skip }, () => {
  let rig: ConsoleRig;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    rig = await startConsoleRig();
    browser = await openBrowser();
    ({ context, page } = browser);
  });

  after(async () => {
    await browser?.close();
    await rig?.close();
  });

  it(
    'signs in, revives a parked server, shows a held diff, approves it for a connected agent, and refuses forged requests',
    { timeout: 100_000 },
    async () => {
      const base = rig.http.base;
      const cspErrors: string[] = [];
      page.on('console', (msg) => {
        if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text());
      });

      await page.goto(`${base}/ui`);
      assert.equal(new URL(page.url()).pathname, '/ui/login');
      await page.screenshot({ path: join(SHOTS, 'login.png') });
      await page.fill('input[name=token]', rig.adminToken);
      await Promise.all([page.waitForURL(`${base}/ui`), page.click('button[type=submit]')]);
      const cookies = await context.cookies(`${base}/ui`);
      const login = cookies.find((c) => c.name === 'mcpgate_console');
      assert.ok(login?.httpOnly === true && login.sameSite === 'Strict', 'the login cookie is HttpOnly and SameSite=Strict');
      assert.equal(await page.evaluate('document.cookie'), '', 'scripts cannot read the login cookie');

      // The parked server, revived once its command works; the live region shows it ready without a reload.
      await page.locator('tr[data-server="late"] .state-parked').waitFor();
      await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true });
      await rig.fixLate();
      await Promise.all([
        page.waitForURL(/\/ui\/server\/late/),
        (async () => {
          await page.click('a[href="/ui/server/late"]');
          await page.click('#revive');
        })(),
      ]);
      await page.locator('.state-ready').first().waitFor({ timeout: 20_000 });

      // A connected agent; echo of dyn changes and is held; its diff is on the server's page.
      let listChanged = 0;
      const agent = await connectAgent(rig.http.url, {
        token: rig.agentToken,
        setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => void listChanged++),
      });
      try {
        process.kill(rig.dynPid, 'SIGUSR1');
        await page.goto(`${base}/ui/server/dyn`);
        await page.locator('tr[data-tool="echo"] pre.diff').waitFor({ timeout: 20_000 });
        const diff = await page.locator('tr[data-tool="echo"] pre.diff').innerText();
        assert.match(diff, /description:/);
        assert.match(diff, /- Echoes the message back as JSON/);
        await page.screenshot({ path: join(SHOTS, 'server-held.png'), fullPage: true });
        assert.ok(
          await until(async () => !(await agent.client.listTools()).tools.some((t) => t.name === 'dyn__echo')),
          'the held tool is still listed',
        );
        const before = listChanged;
        await Promise.all([page.waitForURL(/done=approved/), page.click('button.approve')]);
        assert.match(await page.locator('.notice').innerText(), /approved echo/);
        assert.ok(await until(() => listChanged > before, 15_000), 'the agent was not told the list changed');
        const result = await agent.client.callTool({ name: 'dyn__echo', arguments: { message: 'after approval' } });
        assert.match(JSON.stringify(result), /after approval/);
        await page.goto(`${base}/ui/agent?id=agent1`);
        assert.match(await page.locator('ul.tools').innerText(), /dyn__echo/);
        await page.screenshot({ path: join(SHOTS, 'agent-view.png'), fullPage: true });
      } finally {
        await agent.client.close();
      }

      // Forged requests: the browser's own session without the CSRF token, and a context with no login.
      const forged = await page.request.post(`${base}/ui/server/late/revive`, { form: { nothing: 'here' } });
      assert.equal(forged.status(), 403);
      const csrf = await page.locator('input[name=csrf]').first().getAttribute('value');
      const stranger = await fetch(`${base}/ui/server/late/revive`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `csrf=${csrf ?? ''}`,
        redirect: 'manual',
      });
      assert.equal(stranger.status, 401, 'a request without a login was not refused');
      assert.deepEqual(cspErrors, [], 'the pages broke their own Content-Security-Policy');
    },
  );
});
