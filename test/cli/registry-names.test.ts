// The pure parts of the registry commands, in process: which names only look like a known one, the
// entries each package type and runtime hint gives, and the version order `outdated` uses.

import { describe, it } from 'node:test';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from '../helpers/gateway.js';
import assert from 'node:assert/strict';
import { foreignCharacters, isLookalike } from '../../src/cli/registry/lookalike.js';
import { buildEntry, launchOptions, questionsFor } from '../../src/cli/registry/entry-from-server-json.js';
import { compareVersions } from '../../src/cli/registry/outdated.js';
import { serverResponseSchema, type ServerJson } from '../../src/cli/registry/server-json.js';

/** The machine a launch is chosen for. */
type Machine = Parameters<typeof launchOptions>[1];

/** A server.json, as the registry's answer for a server carries it. */
const serverJsonSchema = serverResponseSchema.shape.server;

const everywhere: Machine = { onPath: () => true, allowOci: true };

function pypi(runtimeHint: string | undefined): ServerJson {
  return serverJsonSchema.parse({
    name: 'io.github.example/tool',
    description: 'x',
    version: '1.2.3',
    packages: [
      {
        registryType: 'pypi',
        identifier: 'mcp-tool',
        version: '1.2.3',
        ...(runtimeHint !== undefined && { runtimeHint }),
        transport: { type: 'stdio' },
      },
    ],
  });
}

void describe('registry names and entries', { timeout: 10_000 }, () => {
  void it('names characters outside printable ASCII', () => {
    assert.deepEqual(foreignCharacters('io.github.owner/server'), []);
    assert.deepEqual(foreignCharacters('io.github.оwner/server'), ['"о" (U+043E)']);
    assert.deepEqual(foreignCharacters('io.github.owner/ser\u200bver'), ['"\u200b" (U+200B)']);
  });

  void it('folds lookalike glyphs, case and separators into one skeleton', () => {
    // Each pair is more than one edit apart, so only the folded skeletons make it a lookalike.
    assert.equal(isLookalike('io.github.Owner-co/my-server', 'io.github.0wner_c0/my_server'), true);
    assert.equal(isLookalike('io.github.modelcontextprotocol/x', 'io.github.modeIcontextprotoco1/x'), true);
    assert.equal(isLookalike('com.microsoft/a', 'com.rnicrosoft/a'), true);
    assert.equal(isLookalike('com.example.tools/a', 'com.exarnple.t0o1s/a'), true);
    assert.equal(isLookalike('com.widgets/a', 'com.vvidget5/a'), true);
  });

  void it('another namespace one edit away with the same server name is a lookalike; the same namespace never is', () => {
    assert.equal(isLookalike('io.github.modelcontextprotocoI/memory', 'io.github.modelcontextprotocol/memory'), true);
    assert.equal(isLookalike('io.github.modelcontextprotocols/memory', 'io.github.modelcontextprotocol/memory'), true);
    assert.equal(isLookalike('io.github.modelcontextprotocol/memory-v2', 'io.github.modelcontextprotocol/memory'), false);
    assert.equal(isLookalike('io.github.alice/memory', 'io.github.bob/memory'), false);
    assert.equal(isLookalike('io.github.example/weather', 'io.github.example/weather'), false);
  });

  void it('a PyPI package runs as its runtime hint says, pinned to its version', () => {
    const entry = (hint: string | undefined): unknown => {
      const option = launchOptions(pypi(hint), everywhere)[0]!;
      return buildEntry(option, questionsFor(option), () => undefined).entry;
    };
    assert.deepEqual(entry(undefined), { command: 'uvx', args: ['mcp-tool==1.2.3'] });
    assert.deepEqual(entry('uvx'), { command: 'uvx', args: ['mcp-tool==1.2.3'] });
    assert.deepEqual(entry('pipx'), { command: 'pipx', args: ['run', 'mcp-tool==1.2.3'] });
    assert.deepEqual(entry('python'), { command: 'python3', args: ['-m', 'mcp_tool'] });
    const none = launchOptions(pypi('pipx'), { onPath: (p) => p === 'uvx', allowOci: false })[0]!;
    assert.equal(none.usable, false);
    assert.match(none.why, /pipx is not on PATH \(the server asks for pipx\)/);
  });

  void it("a remote's URL variable takes its default, and its secret header is a ${VAR}", async () => {
    const text = await readFile(path.join(ROOT, 'test', 'fixtures', 'registry', 'remote-weather.json'), 'utf8');
    const option = launchOptions(serverJsonSchema.parse(JSON.parse(text)), everywhere)[0]!;
    const questions = questionsFor(option);
    assert.deepEqual(
      questions.map((q) => [q.key, q.secret, q.required]),
      [
        ['HOST', false, false],
        ['AUTHORIZATION', true, true],
      ],
    );
    assert.deepEqual(
      buildEntry(option, questions, () => undefined),
      {
        entry: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: '${AUTHORIZATION}' } },
        references: ['AUTHORIZATION'],
      },
    );
  });

  void it('a package version of "latest" fails the schema', () => {
    const result = serverJsonSchema.safeParse({
      name: 'io.github.user/bad-version',
      description: 'x',
      version: '1.0.0',
      packages: [{ registryType: 'npm', identifier: 'x', version: 'latest' }],
    });
    assert.equal(result.success, false);
  });

  void it('orders versions as semantic versions', () => {
    assert.ok(compareVersions('1.10.0', '1.9.9') > 0);
    assert.ok(compareVersions('2.0.0', '2.0.0-beta.1') > 0);
    assert.ok(compareVersions('2026.8.31', '2026.9.1') < 0);
    assert.equal(compareVersions('1.0.0', '1.0.0'), 0);
  });
});
