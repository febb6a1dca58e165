// MCP Apps (`io.modelcontextprotocol/ui`) through mcpgate with an SDK v2 agent and the SDK apps
// fixture: behind a prefixed entry a `ui://` resource keeps its scheme (`ui://PREFIX/…`), and every
// pointer to it — the tool's `_meta.ui.resourceUri`, the older `_meta["ui/resourceUri"]`, the call
// result's `_meta` and `resource_link`, the template — names a URI the agent reads back through
// mcpgate, routed to the server with its own URI. An unprefixed entry keeps its URIs as they are.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureServer, startGateway, tempDir, writeConfig, type GatewayProcess, type TempDir } from '../helpers/gateway.js';

describe('MCP Apps behind a prefixed and an unprefixed entry', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, {
      viz: fixtureServer('apps-server'),
      plain: fixtureServer('apps-server', [], { prefix: false }),
    });
    gw = await startGateway({ config });
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  const readText = async (uri: string): Promise<{ uri: string; text: string }> => {
    const read = await gw.client.readResource({ uri });
    const first = read.contents[0] as { uri: string; text: string };
    return first;
  };

  it('lists the prefixed UI resource and template under ui://PREFIX/…, the unprefixed ones as they are', { timeout: 20_000 }, async () => {
    const uris = (await gw.client.listResources()).resources.map((r) => r.uri).sort();
    assert.deepEqual(uris, ['ui://apps/chart.html', 'ui://viz/apps/chart.html']);
    const templates = (await gw.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
    assert.deepEqual(templates, ['ui://apps/view/{id}', 'ui://viz/apps/view/{id}']);
  });

  it('renames a tool\'s _meta.ui.resourceUri and legacy _meta["ui/resourceUri"] with its resource', { timeout: 20_000 }, async () => {
    const tools = new Map((await gw.client.listTools()).tools.map((t) => [t.name, t._meta]));
    assert.deepEqual(tools.get('viz__chart')?.ui, { resourceUri: 'ui://viz/apps/chart.html' });
    assert.equal(tools.get('viz__legacy_chart')?.['ui/resourceUri'], 'ui://viz/apps/chart.html');
    assert.deepEqual(tools.get('chart')?.ui, { resourceUri: 'ui://apps/chart.html' });
    assert.equal(tools.get('legacy_chart')?.['ui/resourceUri'], 'ui://apps/chart.html');
  });

  it('reads every pointer back through mcpgate, from the server that owns it, under the URI asked for', { timeout: 20_000 }, async () => {
    const tools = (await gw.client.listTools()).tools;
    for (const tool of tools) {
      const meta = tool._meta;
      const pointer = (meta?.ui as { resourceUri?: string } | undefined)?.resourceUri ?? (meta?.['ui/resourceUri'] as string | undefined);
      if (pointer === undefined) continue;
      assert.ok(pointer.startsWith('ui://'), `${tool.name} points at ${pointer}`);
      const read = await readText(pointer);
      assert.equal(read.uri, pointer);
      assert.match(read.text, /<title>chart<\/title>/);
    }
    const view = await readText('ui://viz/apps/view/7');
    assert.equal(view.uri, 'ui://viz/apps/view/7');
    assert.match(view.text, /view 7/);
  });

  it("renames a call result's _meta pointers and resource_link, which read back", { timeout: 20_000 }, async () => {
    for (const [name, key] of [
      ['viz__chart', 'ui'],
      ['viz__legacy_chart', 'ui/resourceUri'],
    ] as const) {
      const result = await gw.client.callTool({ name, arguments: {} });
      const meta = result._meta;
      const pointer = key === 'ui' ? (meta?.ui as { resourceUri: string }).resourceUri : meta?.[key];
      assert.equal(pointer, 'ui://viz/apps/chart.html', name);
      const link = (result.content as { type: string; uri?: string }[]).find((c) => c.type === 'resource_link');
      assert.equal(link?.uri, 'ui://viz/apps/chart.html');
      assert.equal((await readText(link.uri)).uri, 'ui://viz/apps/chart.html');
    }
    const plain = await gw.client.callTool({ name: 'chart', arguments: {} });
    assert.deepEqual(plain._meta?.ui, { resourceUri: 'ui://apps/chart.html' });
  });

  it('sends a ui:// URI naming no prefix to the unprefixed server, which does not know it', { timeout: 20_000 }, async () => {
    await assert.rejects(gw.client.readResource({ uri: 'ui://nosuch/apps/chart.html' }), /not found: ui:\/\/nosuch\/apps\/chart\.html/i);
  });
});
