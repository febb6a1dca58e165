// `/metrics` under `serve --workers N`, the parts that need no process: merging workers'
// expositions with a worker label (src/observability/exposition-merge.ts), the primary's collection
// (HostScraper: timeouts, a worker that exits, shared collections, size bounds) and a worker's
// request to the primary (HostScrapeClient), against in-memory members. The real IPC, with three
// workers and a kill -9: test/e2e/workers-metrics.test.ts.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mergeExpositions } from '../../../src/observability/exposition-merge.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';
import { HostScrapeClient, HostScraper, samplesMessage, type ScrapeMessage } from '../../../src/cli/host-metrics.js';
import { silentLogger } from '../../../src/observability/logger.js';

/** A worker as the scraper asks it. */
type Member = ReturnType<ConstructorParameters<typeof HostScraper>[0]['members']>[number];

/** The bounds and label the primary documents: a worker's largest exposition, its scrapes waiting at once. */
const MAX_WORKER_CHARS = 8 * 1024 * 1024;
const MAX_PENDING_SCRAPES = 16;
const WORKER_LABEL = 'worker';

const T = { timeout: 5000 };

// The scraper's timers are unref'd (a primary or worker is kept alive by its IPC channel and
// sockets); here nothing else holds the event loop while a test waits for one to fire.
let hold: NodeJS.Timeout | undefined;
before(() => {
  hold = setInterval(() => undefined, 1000);
});
after(() => clearInterval(hold));
const SAMPLE =
  /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*")*\})? \S+$/;

/** Families contiguous (a name never comes back after another family's lines), each typed once. */
function assertContiguous(text: string): void {
  const seen = new Set<string>();
  let current = '';
  for (const line of text.trimEnd().split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const name = line.split(' ')[2]!;
      assert.ok(!seen.has(name), `${name} typed once`);
      seen.add(name);
      current = name;
    } else if (!line.startsWith('#')) {
      assert.match(line, SAMPLE);
      assert.ok(line.startsWith(current), `${line} under ${current}`);
    }
  }
}

function worker(calls: number): GatewayMetrics {
  const m = new GatewayMetrics({ version: '1.2.3' });
  for (let i = 0; i < calls; i++) m.callFinished('sink', 'echo', 'ok', 0.002);
  m.httpRequest('POST /mcp', 200);
  return m;
}

describe('mergeExpositions: every sample labelled with its worker, families kept together', () => {
  it('labels bare, labelled and histogram samples, and writes each HELP and TYPE once', T, () => {
    const a =
      '# HELP x_total X.\n# TYPE x_total counter\nx_total 3\n# HELP h H.\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1.5\nh_count 2\n# HELP g G.\n# TYPE g gauge\ng{kind="a"} 1\n';
    const b = a.replace('x_total 3', 'x_total 4');
    assert.equal(
      mergeExpositions([
        { worker: 'vm:1', text: a },
        { worker: 'vm:"2"', text: b },
      ]),
      [
        '# HELP x_total X.',
        '# TYPE x_total counter',
        'x_total{worker="vm:1"} 3',
        'x_total{worker="vm:\\"2\\""} 4',
        '# HELP h H.',
        '# TYPE h histogram',
        'h_bucket{worker="vm:1",le="1"} 1',
        'h_bucket{worker="vm:1",le="+Inf"} 2',
        'h_sum{worker="vm:1"} 1.5',
        'h_count{worker="vm:1"} 2',
        'h_bucket{worker="vm:\\"2\\"",le="1"} 1',
        'h_bucket{worker="vm:\\"2\\"",le="+Inf"} 2',
        'h_sum{worker="vm:\\"2\\""} 1.5',
        'h_count{worker="vm:\\"2\\""} 2',
        '# HELP g G.',
        '# TYPE g gauge',
        'g{worker="vm:1",kind="a"} 1',
        'g{worker="vm:\\"2\\"",kind="a"} 1',
      ].join('\n') + '\n',
    );
  });

  it("merges real gateway expositions into a valid one whose sums are the workers' totals", T, () => {
    const text = mergeExpositions([
      { worker: 'vm:1', text: worker(3).render() },
      { worker: 'vm:2', text: worker(5).render() },
      { worker: 'vm:3', text: worker(0).render() },
    ]);
    assertContiguous(text);
    const lines = text.split('\n');
    const value = (prefix: string): number =>
      lines.filter((l) => l.startsWith(prefix)).reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    assert.equal(value('mcpgate_tool_calls_total{worker="vm:1",server="sink",tool="echo",outcome="ok"}'), 3);
    assert.equal(value('mcpgate_tool_calls_total{'), 8 + 0); // ok 3 + 5; error and failed 0
    assert.equal(value('mcpgate_tool_call_duration_seconds_count{'), 8);
    assert.equal(lines.filter((l) => l.startsWith('mcpgate_up{')).length, 3);
    assert.equal(
      lines.filter((l) => l.startsWith('mcpgate_process_resident_memory_bytes{worker=')).length,
      3,
      'per-process gauges stay per worker',
    );
  });

  it('no gateway family uses the worker label itself', T, () => {
    assert.equal(worker(1).render().includes(`${WORKER_LABEL}=`), false);
  });

  it('is empty for no workers', T, () => {
    assert.equal(mergeExpositions([]), '');
  });
});

/** A member that answers `collect` with `text` (or never, or after exiting). */
function member(pid: number, scraper: () => HostScraper, answer: 'text' | 'never' | 'huge' = 'text', asked: number[] = []): Member {
  return {
    pid,
    send: (m: ScrapeMessage) => {
      asked.push(pid);
      if (m.mcpgate !== 'collect' || answer === 'never') return;
      const text = answer === 'huge' ? 'x'.repeat(MAX_WORKER_CHARS + 1) : `# HELP w W.\n# TYPE w gauge\nw ${pid}\n`;
      queueMicrotask(() =>
        scraper().onMessage(pid, answer === 'huge' ? { mcpgate: 'samples', id: m.id, text } : samplesMessage(m.id, text)),
      );
    },
  };
}

function scraperOf(make: (get: () => HostScraper) => Member[], timeoutMs = 50, restarts = 0): HostScraper {
  const ref: { scraper?: HostScraper } = {};
  const members = make(() => ref.scraper!);
  ref.scraper = new HostScraper({
    configured: 3,
    members: () => members,
    restarts: () => restarts,
    log: silentLogger,
    timeoutMs,
    workerId: (pid) => `vm:${pid}`,
  });
  return ref.scraper;
}

describe('HostScraper: the primary collects every listening worker', () => {
  it('shows each worker that answered, and which did not in time', T, async () => {
    const s = scraperOf((get) => [member(1, get), member(2, get, 'never'), member(3, get)], 50, 2);
    const text = await s.scrape();
    assertContiguous(text);
    for (const line of [
      'mcpgate_workers 3',
      'mcpgate_workers_live 3',
      'mcpgate_workers_scraped 2',
      'mcpgate_worker_scrape_up{worker="vm:2"} 0',
      'mcpgate_worker_scrape_up{worker="vm:1"} 1',
      'mcpgate_worker_restarts_total 2',
      'w{worker="vm:1"} 1',
      'w{worker="vm:3"} 3',
    ]) {
      assert.ok(text.split('\n').includes(line), `${line} in\n${text}`);
    }
    assert.equal(text.includes('w{worker="vm:2"}'), false);
  });

  it('does not wait for a worker that exits: its answer settles at once', T, async () => {
    const s = scraperOf((get) => [member(1, get), member(2, get, 'never')], 60_000);
    const scraped = s.scrape();
    setImmediate(() => s.gone(2));
    const text = await scraped;
    assert.ok(text.includes('mcpgate_workers_scraped 1\n') && text.includes('mcpgate_workers_live 1\n'), text);
    assert.equal(text.includes('vm:2'), false);
  });

  it("refuses a worker's answer over the size bound", T, async () => {
    const s = scraperOf((get) => [member(1, get, 'huge'), member(2, get)]);
    const text = await s.scrape();
    assert.ok(text.includes('mcpgate_worker_scrape_up{worker="vm:1"} 0\n'), text.slice(0, 2000));
    assert.ok(text.length < 10_000);
    assert.equal(samplesMessage(7, 'x'.repeat(MAX_WORKER_CHARS + 1)).mcpgate, 'samples');
    assert.equal((samplesMessage(7, 'x'.repeat(MAX_WORKER_CHARS + 1)) as { text?: string }).text, undefined);
  });

  it('scrapes during a collection share it: each worker is asked once', T, async () => {
    const asked: number[] = [];
    const s = scraperOf((get) => [member(1, get, 'text', asked), member(2, get, 'text', asked)]);
    const [a, b, c] = await Promise.all([s.scrape(), s.scrape(), s.scrape()]);
    assert.deepEqual(asked, [1, 2]);
    assert.equal(a, b);
    assert.equal(b, c);
    await s.scrape();
    assert.deepEqual(asked, [1, 2, 1, 2], 'a later scrape collects again');
  });

  it('ignores stray and late answers', T, async () => {
    const s = scraperOf((get) => [member(1, get)]);
    assert.equal(s.onMessage(1, { mcpgate: 'samples', id: 99, text: 'late' }), true);
    assert.equal(s.onMessage(1, { mcpgate: 'listening', url: 'x' }), false);
    assert.equal(s.onMessage(1, { mcpgate: 'samples', id: 'x' }), false);
    assert.ok((await s.scrape()).includes('w{worker="vm:1"} 1'));
  });
});

describe('HostScrapeClient: a worker asks the primary', () => {
  it('sends a scrape and resolves with the matching answer', T, async () => {
    const sent: ScrapeMessage[] = [];
    const c = new HostScrapeClient((m) => sent.push(m), 1000);
    const asked = c.ask();
    assert.deepEqual(sent, [{ mcpgate: 'scrape', id: 1 }]);
    assert.equal(c.onMessage({ mcpgate: 'scraped', id: 2, text: 'other' }), true);
    assert.equal(c.onMessage({ mcpgate: 'signal', signal: 'SIGHUP' }), false);
    c.onMessage({ mcpgate: 'scraped', id: 1, text: 'host' });
    assert.equal(await asked, 'host');
    const failing = c.ask();
    c.onMessage({ mcpgate: 'scraped', id: 2, error: 'it broke' });
    await assert.rejects(failing, /it broke/);
  });

  it('gives up after its timeout, and when the channel cannot send', T, async () => {
    await assert.rejects(new HostScrapeClient(() => undefined, 20).ask(), /did not answer within 20 ms/);
    await assert.rejects(
      new HostScrapeClient(() => {
        throw new Error('closed');
      }).ask(),
      /cannot be asked: closed/,
    );
  });

  it('bounds the scrapes waiting, and fails them on close', T, async () => {
    const c = new HostScrapeClient(() => undefined, 60_000);
    const waiting = Array.from({ length: MAX_PENDING_SCRAPES }, () => c.ask());
    await assert.rejects(c.ask(), /already waiting/);
    c.close();
    for (const w of waiting) await assert.rejects(w, /stopping/);
    await assert.rejects(c.ask(), /stopping/);
  });
});
