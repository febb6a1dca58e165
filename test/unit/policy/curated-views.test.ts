// Curated views: the rules' `views` compiled (rules/views.ts: every error with its JSON path, warnings
// for servers .mcp.json lacks) and applied to one agent's lists and calls (policy/curated-views.ts:
// selection, renames, descriptions, fixed and hidden parameters; a name the view leaves out is unknown).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRules } from '../../../src/rules/load.js';
import { GatewayError } from '../../../src/errors.js';
import { viewArguments, viewList, viewTarget } from '../../../src/policy/curated-views.js';
import { byPath, failure } from '../../helpers/config.js';

const FILE = '/srv/gateway-rules.json';
const parse = (views: unknown): ReturnType<typeof parseRules> => parseRules(JSON.stringify({ agents: {}, views }), FILE, ['gh', 'db']);

void describe("the rules' views: validation", () => {
  it('shows the skills its `skills` names, by server and path glob, and none without it', async () => {
    const rules = parse({ b: { tools: { gh: [] }, skills: { gh: ['acme/*/invoices', 'refunds'] } }, plain: { tools: { gh: [] } } });
    const view = rules.views.get('b')!;
    assert.equal(view.showsSkill('gh', 'acme/billing/invoices'), true);
    assert.equal(view.showsSkill('gh', 'refunds'), true);
    assert.equal(view.showsSkill('gh', 'refunds/partial'), false);
    assert.equal(view.showsSkill('db', 'refunds'), false, 'a path applies to its own server only');
    assert.equal(rules.views.get('plain')!.showsSkill('gh', 'refunds'), false);
    const { issues } = await failure(() => parse({ b: { tools: { gh: [] }, skills: { gh: 'refunds' } } }));
    const [path, message] = Object.entries(byPath(issues))[0]!;
    assert.match(path, /views.*b.*skills.*gh/);
    assert.match(message, /expected an array of skill paths or patterns/);
  });

  it('compiles exact entries, globs, renames, descriptions, parameters and servers', () => {
    const rules = parse({
      triage: {
        tools: {
          gh: {
            create_issue: {
              name: 'file_bug',
              description: 'D',
              appendDescription: 'A',
              params: { repo: { value: 'acme/app', hidden: true }, labels: { value: ['bug'] } },
            },
            'list_*': {},
          },
          db: ['query'],
        },
        servers: ['db'],
      },
    });
    const view = rules.views.get('triage')!;
    assert.equal(view.select('gh', 'create_issue')?.name, 'file_bug');
    assert.equal(view.select('gh', 'list_issues')?.tool, 'list_*');
    assert.equal(view.select('gh', 'delete_repo'), undefined);
    assert.equal(view.select('db', 'query')?.tool, 'query');
    assert.equal(view.select('db', 'list_issues'), undefined, 'a glob applies to its own server only');
    assert.equal(view.renamed.get('file_bug')?.tool, 'create_issue');
    assert.deepEqual(view.select('gh', 'create_issue')?.params.get('repo'), { value: 'acme/app', hidden: true });
    assert.deepEqual(view.select('gh', 'create_issue')?.params.get('labels'), { value: ['bug'], hidden: false });
    assert.deepEqual([...view.servers], ['db']);
    assert.equal(parse(undefined).views.size, 0);
  });

  it('reports every error with its JSON path', async () => {
    const { issues } = await failure(() =>
      parse({
        'bad name': { tools: {} },
        noTools: {},
        v: {
          tools: {
            gh: {
              'e*': { name: 'x' },
              a: { name: 'same' },
              b: { name: 'same' },
              c: { name: 'has space' },
              d: { params: { p: { hidden: true } } },
              e: { params: { p: { value: 1, hidden: 'yes' } } },
              f: 'nope',
            },
            db: 5,
          },
          servers: 'db',
        },
      }),
    );
    const found = byPath(issues);
    assert.match(found['$.views["bad name"]']!, /URL path segment/);
    assert.match(found['$.views.noTools.tools']!, /missing/);
    assert.match(found['$.views.v.tools.gh["e*"].name']!, /cannot give them one name/);
    assert.match(found['$.views.v.tools.gh.b.name']!, /gives the name "same" to two tools/);
    assert.match(found['$.views.v.tools.gh.c.name']!, /not a valid tool name/);
    assert.match(found['$.views.v.tools.gh.d.params.p']!, /expected \{"value": …\}/);
    assert.match(found['$.views.v.tools.gh.e.params.p.hidden']!, /true or false/);
    assert.match(found['$.views.v.tools.gh.f']!, /expected an object/);
    assert.match(found['$.views.v.tools.db']!, /expected an array of tool names or patterns, or an object/);
    assert.match(found['$.views.v.servers']!, /expected an array of server names/);
  });

  it('warns of servers .mcp.json does not define', () => {
    const rules = parse({ v: { tools: { nowhere: ['x'] }, servers: ['gone'] } });
    const warnings = byPath(rules.warnings);
    assert.match(warnings['$.views.v.tools.nowhere']!, /which \.mcp\.json does not define/);
    assert.match(warnings['$.views.v.servers[0]']!, /which \.mcp\.json does not define/);
  });
});

void describe('a view applied to lists and calls', () => {
  const view = parse({
    v: {
      tools: {
        gh: {
          create_issue: {
            name: 'file_bug',
            description: 'File a bug.',
            params: { repo: { value: 'acme/app', hidden: true }, kind: { value: 'bug' } },
          },
          'list_*': { appendDescription: 'Read only.' },
        },
      },
      servers: ['db'],
    },
  }).views.get('v')!;
  const schema = {
    type: 'object',
    properties: { repo: { type: 'string' }, kind: { type: 'string' }, title: { type: 'string' } },
    required: ['repo', 'title'],
  };
  const items = [
    { server: 'gh', original: 'create_issue', item: { name: 'gh__create_issue', description: 'Creates an issue', inputSchema: schema } },
    {
      server: 'gh',
      original: 'list_issues',
      item: { name: 'gh__list_issues', description: 'Lists issues', inputSchema: { type: 'object' } },
    },
    { server: 'gh', original: 'delete_repo', item: { name: 'gh__delete_repo', inputSchema: { type: 'object' } } },
    { server: 'db', original: 'query', item: { name: 'db__query', inputSchema: { type: 'object' } } },
  ];

  it("lists what the view selects, as it presents it, without touching the catalog's objects", () => {
    const before = JSON.stringify(items);
    const tools = viewList(view, 'tools', items) as Record<string, unknown>[];
    assert.deepEqual(
      tools.map((t) => t.name),
      ['file_bug', 'gh__list_issues'],
    );
    assert.equal(tools[0]!.description, 'File a bug.');
    assert.deepEqual(tools[0]!.inputSchema, {
      type: 'object',
      properties: { kind: { type: 'string', const: 'bug', default: 'bug' }, title: { type: 'string' } },
      required: ['title'],
    });
    assert.equal(tools[1]!.description, 'Lists issues\n\nRead only.');
    assert.equal(JSON.stringify(items), before);
    assert.deepEqual(
      viewList(view, 'prompts', [
        { server: 'gh', item: 1 },
        { server: 'db', item: 2 },
      ]),
      [2],
    );
  });

  it("resolves a call by the view's name; the public name behind a rename and unselected tools are not on it", () => {
    const entries = new Map(items.map((i) => [i.item.name, { server: i.server, original: i.original }]));
    const target = (name: string) =>
      viewTarget(
        view,
        name,
        (n) => entries.get(n),
        (s, o) => `${s}__${o}`,
      );
    assert.equal(target('file_bug')?.publicName, 'gh__create_issue');
    assert.equal(target('gh__list_issues')?.publicName, 'gh__list_issues');
    assert.equal(target('gh__create_issue'), undefined);
    assert.equal(target('gh__delete_repo'), undefined);
    assert.equal(target('nothing'), undefined);
  });

  it('sets fixed parameters; a shown one sent with another value is refused, a hidden one overridden', () => {
    const entry = view.renamed.get('file_bug')!;
    assert.deepEqual(viewArguments(entry, 'file_bug', { title: 't' }), { title: 't', repo: 'acme/app', kind: 'bug' });
    assert.deepEqual(viewArguments(entry, 'file_bug', { title: 't', repo: 'evil/repo', kind: 'bug' }), {
      title: 't',
      repo: 'acme/app',
      kind: 'bug',
    });
    const refused = viewArguments(entry, 'file_bug', { kind: 'feature' });
    assert.ok(refused instanceof GatewayError && refused.code === 'MCPG_INVALID_PARAMS');
    assert.match(refused.message, /parameter "kind" is fixed to "bug"/);
  });
});
