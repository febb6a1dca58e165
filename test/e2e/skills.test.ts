// Skills (`io.modelcontextprotocol/skills`) through mcpgate, with the v2 SDK's skills fixture
// (test/fixtures/skills-server.ts: a stdio server with directory reads, an HTTP one without, a third
// that pages its listing by 7) and the SDK's own `SkillsClient` as the agent, which verifies every
// file it reads against its entry. mcpgate declares the extension, merges the listings (paginated),
// gives each origin's skills their server's prefix (two servers' `skill://refunds/SKILL.md` are two
// skills), routes get, reads and directory reads to the owning server, pins every skill's manifest:
// a changed supporting file is refused on read (size/digest) and its skill held until approved, a
// changed SKILL.md is held, approving a skill leaves a skill nested in it held. Over HTTP, the rules'
// skill globs decide what each agent sees, for a 2025 agent and a 2026-07-28 one.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as z from 'zod';
import { Client } from '@modelcontextprotocol/client';
import { SkillsClient, type Skill } from '@modelcontextprotocol/client/ext/skills';
import { cli, fixtureServer, startGateway, tempDir, until, writeConfig, type GatewayProcess, type TempDir } from '../helpers/gateway.js';
import { connectAgent, makeToken, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { startRemote, type Remote } from '../helpers/remote.js';
import { fixture } from '../helpers/gateway.js';

const TIMEOUT = 90_000;
const PAGE = z.looseObject({ skills: z.array(z.unknown()), nextCursor: z.string().optional() });
const ANY = z.looseObject({});

async function put(root: string, path: string, text: string): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
}

const skillMd = (name: string, description: string, body = '', extra = ''): string =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n# ${name}\n${body}\n`;

/** docs: refunds (with examples, a script and the nested skill partial) and acme/billing/invoices. */
async function docsFolder(root: string): Promise<void> {
  await put(root, 'refunds/SKILL.md', skillMd('refunds', 'Process refunds', 'See examples/email.md and templates/.'));
  await put(root, 'refunds/examples/email.md', 'Dear customer,\n');
  await put(root, 'refunds/scripts/run.py', 'print("refund")\n');
  await put(root, 'refunds/partial/SKILL.md', skillMd('partial', 'Partial refunds'));
  await put(root, 'acme/billing/invoices/SKILL.md', skillMd('invoices', 'Issue invoices', '', 'license: MIT\n'));
}

interface ErrorLike {
  code?: number;
  message?: string;
}

async function refused(promise: Promise<unknown>): Promise<ErrorLike> {
  try {
    await promise;
  } catch (err) {
    return err as ErrorLike;
  }
  assert.fail('expected a refusal');
}

/** Waits until each server's catalog (and skills) is listed. */
async function listedAll(gw: GatewayProcess, servers: readonly string[]): Promise<void> {
  await Promise.all(servers.map((server) => gw.waitForLog((l) => l.msg === 'catalog listed' && l.server === server)));
}

const uris = (skills: readonly Skill[]): string[] => skills.map((s) => s.uri).sort();

describe('skills through mcpgate: a stdio agent, servers over stdio and HTTP', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let remote: Remote;
  let skills: SkillsClient;
  let resourcesChanged = 0;
  const docs = (): string => dir.file('docs');
  const other = (): string => dir.file('other');

  before(async () => {
    dir = await tempDir();
    await docsFolder(docs());
    await put(other(), 'refunds/SKILL.md', skillMd('refunds', 'Refunds the other way'));
    await put(other(), 'refunds/notes.md', 'other notes\n');
    for (let i = 0; i < 60; i++)
      await put(dir.file('bulk'), `s${String(i).padStart(2, '0')}/SKILL.md`, skillMd(`s${String(i).padStart(2, '0')}`, `bulk ${i}`));
    remote = await startRemote(process.execPath, [
      fixture('skills-server'),
      '--http',
      '--dir',
      other(),
      '--no-directory',
      '--ttl',
      '60000',
    ]);
    const config = await writeConfig(dir, {
      docs: fixtureServer('skills-server', ['--dir', docs()]),
      other: { type: 'http', url: remote.url },
      bulk: fixtureServer('skills-server', ['--dir', dir.file('bulk'), '--page', '7', '--ttl', '60000']),
    });
    // The agent initializes once every server is listed: what mcpgate declares is what its servers did by then.
    gw = await startGateway({ config, args: ['--state', dir.file('state')], noClient: true });
    await listedAll(gw, ['docs', 'other', 'bulk']);
    gw.client = new Client({ name: 'skills-test', version: '1.0.0' });
    await gw.client.connect(gw.transport as never);
    gw.client.setNotificationHandler('notifications/resources/list_changed', () => void resourcesChanged++);
    skills = new SkillsClient(gw.client);
  });

  after(async () => {
    await gw?.stop();
    await remote?.stop();
    await dir?.remove();
  });

  const listed = async (): Promise<Skill[]> => (await skills.list()).skills;

  it('declares the extension, with directoryRead since one server reads directories', { timeout: 20_000 }, () => {
    const extensions = gw.client.getServerCapabilities()?.extensions;
    assert.equal(extensions?.['io.modelcontextprotocol/skills']?.directoryRead, true);
    assert.equal(skills.supported, true);
  });

  it("merges every server's skills in pages, each origin under its own prefix", { timeout: 30_000 }, async () => {
    await until(async () => (await listed()).length === 64, 20_000);
    const first = await gw.client.request({ method: 'skills/list', params: {} }, PAGE);
    assert.equal(first.skills.length, 50);
    assert.equal(typeof first.nextCursor, 'string');
    const all = await listed();
    assert.equal(all.length, 64);
    const mine = uris(all).filter((u) => !u.startsWith('skill://bulk/'));
    assert.deepEqual(mine, [
      'skill://docs/acme/billing/invoices/SKILL.md',
      'skill://docs/refunds/SKILL.md',
      'skill://docs/refunds/partial/SKILL.md',
      'skill://other/refunds/SKILL.md',
    ]);
    for (const skill of all) {
      const root = skill.uri.slice(0, -'/SKILL.md'.length);
      assert.equal(root.slice(root.lastIndexOf('/') + 1), skill.frontmatter.name);
      if (skill.resources !== 'dynamic') for (const file of skill.resources) assert.ok(file.uri.startsWith(`${root}/`), file.uri);
    }
    const docsRefunds = all.find((s) => s.uri === 'skill://docs/refunds/SKILL.md')!;
    const otherRefunds = all.find((s) => s.uri === 'skill://other/refunds/SKILL.md')!;
    assert.equal(docsRefunds.frontmatter.description, 'Process refunds');
    assert.equal(otherRefunds.frontmatter.description, 'Refunds the other way');
  });

  it('gets a skill and reads every file of every skill of docs and other, each verified by the SDK', { timeout: 30_000 }, async () => {
    for (const skill of (await listed()).filter((s) => !s.uri.startsWith('skill://bulk/'))) {
      const got = await skills.get(skill.uri);
      assert.deepEqual(got.skill, skill);
      assert.ok(skill.resources !== 'dynamic');
      for (const file of skill.resources) {
        const read = await skills.read(skill, file.uri);
        assert.equal(read.verified, true, file.uri);
        assert.equal(read.uri, file.uri);
      }
    }
    const bulk = await gw.client.request({ method: 'skills/get', params: { uri: 'skill://bulk/s07/SKILL.md' } }, ANY);
    assert.equal(bulk.ttlMs, 60000, "the server's caching hints pass through");
    assert.equal(bulk.cacheScope, 'public');
    const partial = (await listed()).find((s) => s.uri === 'skill://docs/refunds/partial/SKILL.md')!;
    assert.match((await skills.read(partial)).text ?? '', /# partial/);
  });

  it('reads a directory on the server that declared directoryRead, and refuses it for one that did not', { timeout: 20_000 }, async () => {
    const dirRead = await skills.readDirectory('skill://docs/refunds');
    const children = dirRead.resources.map((r) => r.uri).sort();
    assert.deepEqual(children, [
      'skill://docs/refunds/SKILL.md',
      'skill://docs/refunds/examples',
      'skill://docs/refunds/partial',
      'skill://docs/refunds/scripts',
    ]);
    const err = await refused(gw.client.request({ method: 'resources/directory/read', params: { uri: 'skill://other/refunds' } }, ANY));
    assert.match(String(err.message), /does not declare directoryRead/);
  });

  it('refuses a changed supporting file on read, holds its skill, and releases it once approved', { timeout: 30_000 }, async () => {
    const before = (await listed()).find((s) => s.uri === 'skill://other/refunds/SKILL.md')!;
    await put(other(), 'refunds/notes.md', 'other notes, rewritten\n');
    const err = await refused(gw.client.readResource({ uri: 'skill://other/refunds/notes.md' }, { cacheMode: 'bypass' }));
    assert.equal(err.code, -31081, err.message);
    assert.ok(!uris(await listed()).includes('skill://other/refunds/SKILL.md'), 'a skill that failed is not listed');
    // The refusal lists the server again, and the pins hold the changed skill.
    let held: ErrorLike = {};
    assert.ok(await until(async () => (held = await refused(skills.get('skill://other/refunds/SKILL.md'))).code === -31080), 'held');
    assert.match(String(held.message), /mcpgate approve other skill:\/\/refunds\/SKILL\.md/);
    const heldRead = await refused(gw.client.readResource({ uri: 'skill://other/refunds/SKILL.md' }, { cacheMode: 'bypass' }));
    assert.equal(heldRead.code, -31080);
    const approved = await cli(['approve', 'other', 'skill://refunds/SKILL.md', '--state', dir.file('state')]);
    assert.equal(approved.code, 0, approved.err);
    assert.ok(await until(async () => uris(await listed()).includes('skill://other/refunds/SKILL.md')), 'released');
    const after = (await listed()).find((s) => s.uri === 'skill://other/refunds/SKILL.md')!;
    assert.notDeepEqual(after.resources, before.resources);
    assert.equal((await skills.read(after, 'notes.md')).text, 'other notes, rewritten\n');
  });

  it('holds a changed SKILL.md; approving the enclosing skill leaves the nested one held', { timeout: 30_000 }, async () => {
    const announced = resourcesChanged;
    await put(docs(), 'refunds/partial/SKILL.md', skillMd('partial', 'Partial refunds, now with a twist'));
    await gw.client.callTool({ name: 'docs__notify_skills_changed', arguments: {} });
    assert.ok(
      await until(async () => {
        const now = uris(await listed());
        return !now.includes('skill://docs/refunds/SKILL.md') && !now.includes('skill://docs/refunds/partial/SKILL.md');
      }),
      'both the nested skill and the one enclosing it are held',
    );
    assert.ok(resourcesChanged > announced, 'the agent was told its resources changed');
    const pins = await cli(['pins', 'docs', '--state', dir.file('state')]);
    assert.match(pins.out, /skill:\/\/refunds\/partial\/SKILL\.md/);
    const approved = await cli(['approve', 'docs', 'skill://refunds/SKILL.md', '--state', dir.file('state')]);
    assert.equal(approved.code, 0, approved.err);
    assert.ok(await until(async () => uris(await listed()).includes('skill://docs/refunds/SKILL.md')));
    assert.ok(!uris(await listed()).includes('skill://docs/refunds/partial/SKILL.md'), 'the nested skill stays held');
    const nested = await refused(skills.get('skill://docs/refunds/partial/SKILL.md'));
    assert.equal(nested.code, -31080);
    assert.equal((await cli(['approve', 'docs', 'skill://refunds/partial/SKILL.md', '--state', dir.file('state')])).code, 0);
    assert.ok(await until(async () => uris(await listed()).includes('skill://docs/refunds/partial/SKILL.md')));
  });
});

describe("skills over HTTP: the rules' skill globs, a 2025 agent and a 2026-07-28 agent", { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const alice = makeToken();
  const bob = makeToken();
  const carol = makeToken();
  const admin = makeToken();

  before(async () => {
    dir = await tempDir();
    await docsFolder(dir.file('docs'));
    await put(dir.file('other'), 'refunds/SKILL.md', skillMd('refunds', 'Refunds the other way'));
    await put(dir.file('other'), 'tooling/SKILL.md', skillMd('tooling', 'Needs a tool', '', 'allowed-tools: notify_skills_changed\n'));
    const config = await writeConfig(dir, {
      docs: fixtureServer('skills-server', ['--dir', dir.file('docs')]),
      other: fixtureServer('skills-server', ['--dir', dir.file('other')]),
    });
    const rules = await writeRules(dir, {
      admins: { root: { tokens: [admin.hash] } },
      agents: {
        alice: { tokens: [alice.hash], allow: { servers: ['*'], skills: { docs: ['acme/*/*'] } } },
        bob: {
          tokens: [bob.hash],
          allow: { servers: ['*'], tools: { other: ['none'] } },
          deny: { skills: { '*': ['*refunds*'] } },
        },
        carol: { tokens: [carol.hash], allow: { servers: ['*'] } },
      },
      views: { billing: { tools: { docs: [] }, skills: { docs: ['acme/*/invoices'], other: ['refunds'] } } },
    });
    gate = await startHttpGateway({
      config,
      agent: null,
      args: ['--rules', rules, '--state', dir.file('state'), '--audit', dir.file('audit.jsonl')],
    });
    await listedAll(gate.gw, ['docs', 'other']);
  });

  after(async () => {
    await gate?.stop();
    await dir?.remove();
  });

  it('shows each agent the skills its globs allow, and refuses the rest', { timeout: 30_000 }, async () => {
    const a = await connectAgent(gate.url, { token: alice.token });
    const b = await connectAgent(gate.url, { token: bob.token });
    try {
      const aliceSkills = new SkillsClient(a.client);
      const bobSkills = new SkillsClient(b.client);
      let seen: string[] = [];
      assert.ok(
        await until(async () => (seen = uris((await aliceSkills.list()).skills)).length === 3, 20_000),
        `alice sees ${seen.join(', ')}`,
      );
      assert.deepEqual(uris((await aliceSkills.list()).skills), [
        'skill://docs/acme/billing/invoices/SKILL.md',
        'skill://other/refunds/SKILL.md',
        'skill://other/tooling/SKILL.md',
      ]);
      const denied = await refused(aliceSkills.get('skill://docs/refunds/SKILL.md'));
      assert.equal(denied.code, -32602);
      // bob: no refunds anywhere, and not tooling (its allowed-tools names a tool bob may not call).
      assert.deepEqual(uris((await bobSkills.list()).skills), ['skill://docs/acme/billing/invoices/SKILL.md']);
      const read = await refused(b.client.readResource({ uri: 'skill://docs/refunds/SKILL.md' }));
      assert.equal(read.code, -32602);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it('a curated view shows only the skills it names, and the audit trail has every skill read', { timeout: 30_000 }, async () => {
    const onView = await connectAgent(`${gate.base}/mcp/v/billing`, { token: carol.token });
    const whole = await connectAgent(gate.url, { token: carol.token });
    try {
      const viewed = uris((await new SkillsClient(onView.client).list()).skills);
      assert.deepEqual(viewed, ['skill://docs/acme/billing/invoices/SKILL.md', 'skill://other/refunds/SKILL.md']);
      assert.equal((await new SkillsClient(whole.client).list()).skills.length, 5, 'off the view, carol sees every skill');
      const off = await refused(onView.client.readResource({ uri: 'skill://docs/refunds/SKILL.md' }));
      assert.equal(off.code, -32602);
      await onView.client.readResource({ uri: 'skill://other/refunds/SKILL.md' });
    } finally {
      await onView.client.close();
      await whole.client.close();
    }
    const lines = (await readFile(dir.file('audit.jsonl'), 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const reads = lines.filter((l) => l.agent === 'carol' && l.method === 'resources/read');
    assert.ok(
      reads.some((l) => l.resource === 'skill://other/refunds/SKILL.md' && l.outcome === 'ok'),
      JSON.stringify(reads),
    );
    assert.ok(
      reads.some((l) => l.resource === 'skill://docs/refunds/SKILL.md' && l.outcome === 'failed' && l.code === 'MCPG_INVALID_PARAMS'),
    );
  });

  it("the status lists each server's skills with their pin state", { timeout: 20_000 }, async () => {
    const res = await fetch(`${gate.base}/status`, { headers: { authorization: `Bearer ${admin.token}` } });
    assert.equal(res.status, 200);
    const status = (await res.json()) as { servers: { name: string; skills?: { listed: number; held: number } }[] };
    const of = (name: string) => status.servers.find((s) => s.name === name)?.skills;
    assert.deepEqual(of('docs'), { listed: 3, held: 0, held_skills: [] });
    assert.deepEqual(of('other'), { listed: 2, held: 0, held_skills: [] });
  });

  it("the console's server page lists the server's skills with their pin state", { timeout: 20_000 }, async () => {
    const login = await fetch(`${gate.base}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: admin.token }).toString(),
      redirect: 'manual',
    });
    assert.equal(login.status, 303);
    const cookie = String(login.headers.get('set-cookie')).split(';')[0]!;
    const page = await fetch(`${gate.base}/ui/server/docs`, { headers: { cookie } });
    assert.equal(page.status, 200);
    const text = await page.text();
    const skillsTable = text.slice(text.indexOf('<table id="skills">'));
    assert.ok(text.includes('<table id="skills">'), 'a skills table');
    for (const uri of ['skill://acme/billing/invoices/SKILL.md', 'skill://refunds/SKILL.md', 'skill://refunds/partial/SKILL.md'])
      assert.match(skillsTable, new RegExp(`data-skill="${uri.replace(/[./]/g, '\\$&')}"[^]*?approved`), uri);
    assert.match(skillsTable, /Issue invoices · 1 file</);
  });

  it('serves a 2026-07-28 agent the same skills, with caching hints', { timeout: 30_000 }, async () => {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const client = new Client({ name: 'modern-skills', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gate.url), { requestInit: { headers: { authorization: `Bearer ${alice.token}` } } }),
    );
    try {
      const modern = new SkillsClient(client);
      const listing = await modern.list();
      assert.equal(listing.skills.length, 3);
      assert.equal(typeof listing.ttlMs, 'number');
      const invoices = listing.skills.find((s) => s.uri === 'skill://docs/acme/billing/invoices/SKILL.md')!;
      const read = await modern.read(invoices);
      assert.equal(read.verified, true);
      assert.equal(read.frontmatter?.license, 'MIT');
    } finally {
      await client.close();
    }
  });
});

describe('skills mcpgate serves from a local folder (serve --skills)', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let skills: SkillsClient;
  const folder = (): string => dir.file('team-skills');

  before(async () => {
    dir = await tempDir();
    await put(
      folder(),
      'team/SKILL.md',
      skillMd(
        'team',
        'How this team works',
        'Read notes/conventions.md.',
        'license: MIT\ntags: [ops, review]\nmetadata:\n  version: "1.0"\n  team: ops\n',
      ),
    );
    await put(folder(), 'team/notes/conventions.md', 'Small commits.\n');
    await put(folder(), 'team/scripts/check.sh', '#!/bin/sh\necho ok\n');
    const config = await writeConfig(dir, {});
    gw = await startGateway({ config, args: ['--state', dir.file('state'), '--skills', folder()] });
    skills = new SkillsClient(gw.client);
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  const listed = async (): Promise<Skill[]> => (await skills.list()).skills;

  it(
    "declares the extension and serves the folder's skill under the origin mcpgate, every file verified",
    { timeout: 20_000 },
    async () => {
      assert.equal(skills.supported, true);
      assert.equal(skills.directoryRead, true);
      const all = await listed();
      assert.deepEqual(uris(all), ['skill://mcpgate/team/SKILL.md']);
      const team = all[0]!;
      assert.deepEqual(team.frontmatter, {
        name: 'team',
        description: 'How this team works',
        license: 'MIT',
        tags: ['ops', 'review'],
        metadata: { version: '1.0', team: 'ops' },
      });
      assert.ok(team.resources !== 'dynamic');
      assert.deepEqual(
        team.resources.map((f) => f.uri),
        ['skill://mcpgate/team/SKILL.md', 'skill://mcpgate/team/notes/conventions.md', 'skill://mcpgate/team/scripts/check.sh'],
      );
      for (const file of team.resources) assert.equal((await skills.read(team, file.uri)).verified, true, file.uri);
      const children = (await skills.readDirectory('skill://mcpgate/team')).resources.map((r) => r.uri).sort();
      assert.deepEqual(children, ['skill://mcpgate/team/SKILL.md', 'skill://mcpgate/team/notes', 'skill://mcpgate/team/scripts']);
    },
  );

  it('holds a changed local skill until approved, then serves the new content', { timeout: 30_000 }, async () => {
    await put(folder(), 'team/notes/conventions.md', 'Small commits, reviewed.\n');
    assert.ok(await until(async () => (await listed()).length === 0), 'the changed skill is held');
    const held = await refused(skills.get('skill://mcpgate/team/SKILL.md'));
    assert.equal(held.code, -31080, held.message);
    const approved = await cli(['approve', 'mcpgate', 'skill://team/SKILL.md', '--state', dir.file('state')]);
    assert.equal(approved.code, 0, approved.err);
    assert.ok(await until(async () => (await listed()).length === 1), 'released');
    const team = (await listed())[0]!;
    assert.equal((await skills.read(team, 'notes/conventions.md')).text, 'Small commits, reviewed.\n');
  });
});

describe('skills to a 2026-07-28 agent over stdio', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    await docsFolder(dir.file('docs'));
    const config = await writeConfig(dir, { docs: fixtureServer('skills-server', ['--dir', dir.file('docs')]) });
    gw = await startGateway({ config, args: ['--state', dir.file('state'), '--pins', 'off'], noClient: true });
    await listedAll(gw, ['docs']);
    gw.client = new Client({ name: 'modern-stdio-skills', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await gw.client.connect(gw.transport as never);
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('lists, gets and reads every file, each verified by the SDK', { timeout: 30_000 }, async () => {
    const skills = new SkillsClient(gw.client);
    const listing = await skills.list();
    assert.ok(listing.skills.length > 0);
    for (const skill of listing.skills) {
      assert.match(skill.uri, /^skill:\/\/docs\//);
      const read = await skills.read(skill);
      assert.equal(read.verified, true, skill.uri);
    }
  });
});

describe('skills mcpgate verifies itself with pins off: a hostile entry and a changed file', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  const reads = (): string => dir.file('reads.txt');
  const PAGE_URIS = z.looseObject({ skills: z.array(z.looseObject({ uri: z.string() })) });
  const listedUris = async (): Promise<string[]> =>
    (await gw.client.request({ method: 'skills/list', params: {} }, PAGE_URIS)).skills.map((s) => s.uri).sort();
  const asked = async (): Promise<string[]> => (await readFile(reads(), 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');

  before(async () => {
    dir = await tempDir();
    await put(dir.file('liar'), 'refunds/SKILL.md', skillMd('refunds', 'Process refunds'));
    await put(dir.file('liar'), 'refunds/notes.md', 'notes\n');
    await docsFolder(dir.file('docs'));
    const config = await writeConfig(dir, {
      liar: fixtureServer('skills-server', ['--dir', dir.file('liar'), '--lie-frontmatter', '--reads', reads()]),
      docs: fixtureServer('skills-server', ['--dir', dir.file('docs')]),
    });
    gw = await startGateway({ config, args: ['--state', dir.file('state'), '--pins', 'off'], noClient: true });
    await listedAll(gw, ['liar', 'docs']);
    gw.client = new Client({ name: 'careless-agent', version: '1.0.0' });
    await gw.client.connect(gw.transport as never);
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it("refuses a SKILL.md whose frontmatter is not its entry's, then relays none of that skill's files", { timeout: 30_000 }, async () => {
    assert.ok((await listedUris()).includes('skill://liar/refunds/SKILL.md'));
    const skillMdRead = await refused(gw.client.readResource({ uri: 'skill://liar/refunds/SKILL.md' }));
    assert.equal(skillMdRead.code, -31081);
    assert.match(skillMdRead.message ?? '', /frontmatter differs from the entry's in "description"/);
    // A careless agent reads on: mcpgate does not ask the server for a file of a skill that failed.
    const notes = await refused(gw.client.readResource({ uri: 'skill://liar/refunds/notes.md' }));
    assert.equal(notes.code, -31081);
    assert.match(notes.message ?? '', /failed verification/);
    assert.deepEqual(await asked(), ['skill://refunds/SKILL.md']);
    assert.ok(!(await listedUris()).includes('skill://liar/refunds/SKILL.md'), 'a skill that failed is not listed');
  });

  it('refuses a file changed since the listing, and relays the new bytes once the server lists them', { timeout: 30_000 }, async () => {
    await put(dir.file('docs'), 'refunds/examples/email.md', 'Dear customer, rewritten\n');
    const changed = await refused(gw.client.readResource({ uri: 'skill://docs/refunds/examples/email.md' }));
    assert.equal(changed.code, -31081);
    assert.match(changed.message ?? '', /bytes where the manifest says/);
    // The refusal listed the server again; with pins off its new entry is the one reads are checked against.
    await until(async () => {
      try {
        const read = await gw.client.readResource({ uri: 'skill://docs/refunds/examples/email.md' });
        return (read.contents[0] as { text?: string }).text === 'Dear customer, rewritten\n';
      } catch {
        return false;
      }
    }, 20_000);
  });
});

for (const mode of ['search', 'code'] as const)
  describe(`skills found by search_tools (${mode} mode), under the rules`, { timeout: TIMEOUT }, () => {
    let dir: TempDir;
    let gw: GatewayProcess;
    const HITS = z.looseObject({
      content: z.array(z.looseObject({ text: z.string().optional() })),
      structuredContent: z.looseObject({ skills: z.array(z.looseObject({ kind: z.literal('skill'), uri: z.string() })).optional() }),
    });

    before(async () => {
      dir = await tempDir();
      await docsFolder(dir.file('docs'));
      const config = await writeConfig(dir, { docs: fixtureServer('skills-server', ['--dir', dir.file('docs')]) });
      const rules = await writeRules(dir, {
        agents: { searcher: { allow: { servers: ['*'] }, deny: { skills: { docs: ['acme/*/*'] } }, mode } },
      });
      gw = await startGateway({ config, args: ['--state', dir.file('state'), '--rules', rules, '--agent', 'searcher'], noClient: true });
      await listedAll(gw, ['docs']);
      gw.client = new Client({ name: 'searching-agent', version: '1.0.0' });
      await gw.client.connect(gw.transport as never);
    });

    after(async () => {
      await gw?.stop();
      await dir?.remove();
    });

    const search = async (query: string): Promise<z.infer<typeof HITS>> =>
      HITS.parse(await gw.client.callTool({ name: 'search_tools', arguments: { query } }));

    it('answers a skill that matches the task beside the tools, marked as a skill', { timeout: 20_000 }, async () => {
      const found = await search('process a refund for a customer');
      const uris = found.structuredContent.skills?.map((s) => s.uri) ?? [];
      assert.equal(uris[0], 'skill://docs/refunds/SKILL.md', uris.join(', '));
      assert.ok(!uris.some((u) => u.includes('invoices')), 'only skills that match');
      assert.match(found.content[0]?.text ?? '', /^skill skill:\/\/docs\/refunds\/SKILL\.md — Process refunds$/m);
    });

    it('never finds a skill the rules hide', { timeout: 20_000 }, async () => {
      const found = await search('issue invoices for billing');
      assert.equal(found.structuredContent.skills, undefined, JSON.stringify(found.structuredContent));
    });
  });
