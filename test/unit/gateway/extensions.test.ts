// The merge of the servers' declared extensions that mcpgate declares to agents (gateway/session/extensions.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { extensionsOf, mergeExtensions, routableExtensions } from '../../../src/gateway/session/extensions.js';

void describe('mergeExtensions', { timeout: 5000 }, () => {
  void it('is undefined when no server declares any', { timeout: 5000 }, () => {
    assert.equal(mergeExtensions([undefined, undefined]), undefined);
    assert.equal(extensionsOf({ tools: {} }), undefined);
    assert.equal(extensionsOf({ extensions: {} }), undefined);
    assert.equal(extensionsOf({ extensions: ['x'] }), undefined);
  });

  void it("takes every id; merges objects key by key, joins lists, and keeps the earlier server's other values", { timeout: 5000 }, () => {
    const merged = mergeExtensions([
      { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] }, a: { level: 1, nested: { x: 1 } } },
      undefined,
      {
        'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app', 'text/x-other'] },
        a: { level: 2, nested: { y: 2 }, extra: true },
        b: {},
      },
    ]);
    assert.deepEqual(merged, {
      'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app', 'text/x-other'] },
      a: { level: 1, nested: { x: 1, y: 2 }, extra: true },
      b: {},
    });
  });

  void it('declares to agents only the extensions mcpgate routes', { timeout: 5000 }, () => {
    const ui = { mimeTypes: ['text/html;profile=mcp-app'] };
    assert.deepEqual(routableExtensions({ 'io.modelcontextprotocol/ui': ui, 'com.example/unroutable': {} }), {
      'io.modelcontextprotocol/ui': ui,
    });
    assert.equal(routableExtensions({ 'com.example/unroutable': {} }), undefined);
    assert.equal(routableExtensions(undefined), undefined);
  });
});
