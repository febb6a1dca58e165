// Debian's Chromium driven by playwright-core for the console's browser tests: one headless browser
// with a profile of its own, closed (profile removed) by the test that opened it; `skip` says why
// the tests cannot run where /usr/bin/chromium is missing (.ci/run installs it).

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from './gateway.js';

const CHROMIUM = '/usr/bin/chromium';

/** Where the console tests leave their screenshots. */
export const SHOTS = join(ROOT, 'dist/test-output/console');

/** False where Chromium is installed, else the reason the browser tests are skipped. */
export const skip: false | string = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is missing (install Debian's chromium package; .ci/run does)`;

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile and one page (and the screenshots' folder made). */
export async function openBrowser(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'mcpgate-chromium-'));
  await mkdir(SHOTS, { recursive: true });
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
      viewport: { width: 1200, height: 800 },
    });
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw err;
  }
  const page = await context.newPage();
  return {
    context,
    page,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
