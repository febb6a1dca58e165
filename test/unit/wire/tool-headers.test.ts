// wire/tool-headers.ts: the Mcp-Param-* headers mcpgate writes, as the client of a modern server, for
// a tool whose input schema annotates parameters with x-mcp-header, and the annotations it rejects.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callHeaders, toolHeaders } from '../../../src/wire/tool-headers.js';

const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('toolHeaders', () => {
  it('maps each annotated string, integer or boolean parameter to its header, and ignores the rest', () => {
    const found = toolHeaders(
      schema({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        n: { type: 'integer', 'x-mcp-header': 'N' },
        on: { type: 'boolean', 'x-mcp-header': 'On' },
        q: { type: 'string' },
      }),
    );
    assert.deepEqual(found instanceof Map ? [...found] : found, [
      ['region', 'Region'],
      ['n', 'N'],
      ['on', 'On'],
    ]);
    assert.equal(toolHeaders(schema({ q: { type: 'string' } })), undefined);
    assert.equal(toolHeaders({ type: 'object' }), undefined);
  });

  it('rejects empty, non-string, non-token and duplicate names, and non-primitive or number parameters', () => {
    const bad: Record<string, unknown>[] = [
      { v: { type: 'string', 'x-mcp-header': '' } },
      { v: { type: 'string', 'x-mcp-header': 7 } },
      { v: { type: 'object', 'x-mcp-header': 'Data' } },
      { v: { type: 'array', 'x-mcp-header': 'Items' } },
      { v: { type: 'null', 'x-mcp-header': 'Nil' } },
      { v: { type: 'number', 'x-mcp-header': 'Score' } },
      { a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'string', 'x-mcp-header': 'Region' } },
      { a: { type: 'string', 'x-mcp-header': 'MyField' }, b: { type: 'string', 'x-mcp-header': 'myfield' } },
      { v: { type: 'string', 'x-mcp-header': 'My Region' } },
      { v: { type: 'string', 'x-mcp-header': 'Region:Primary' } },
      { v: { type: 'string', 'x-mcp-header': 'Région' } },
      { v: { type: 'string', 'x-mcp-header': 'Region\t1' } },
    ];
    for (const properties of bad) assert.equal(typeof toolHeaders(schema(properties)), 'string', JSON.stringify(properties));
  });
});

describe('the headers of a call', () => {
  const tool = {
    inputSchema: schema({
      region: { type: 'string', 'x-mcp-header': 'Region' },
      n: { type: 'integer', 'x-mcp-header': 'Priority' },
      on: { type: 'boolean', 'x-mcp-header': 'Verbose' },
      text: { type: 'string', 'x-mcp-header': 'Text' },
      method: { type: 'string', 'x-mcp-header': 'Method' },
    }),
  };
  const mirroredHeaders = (args: unknown) => callHeaders(tool, args);

  it('writes numbers and booleans as text, plain ASCII as is, and omits absent or null parameters', () => {
    assert.deepEqual(mirroredHeaders({ region: 'us west 1', n: 42, on: false, method: 'm', text: null, other: 'x' }), {
      'mcp-param-region': 'us west 1',
      'mcp-param-priority': '42',
      'mcp-param-verbose': 'false',
      'mcp-param-method': 'm',
    });
    assert.deepEqual(mirroredHeaders({ region: '' }), { 'mcp-param-region': '' });
    assert.deepEqual(mirroredHeaders({}), {}, 'no annotated argument: no header');
  });

  it('sends non-ASCII, control characters and edge whitespace as Base64 of the UTF-8', () => {
    for (const text of ['Hello, 世界', ' padded ', 'line1\nline2', '\tindented', 'trailing ']) {
      assert.deepEqual(
        mirroredHeaders({ text }),
        { 'mcp-param-text': `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=` },
        JSON.stringify(text),
      );
    }
  });
});

describe('callHeaders', () => {
  it("is undefined for a tool without annotations (the agent's own headers go on), empty for one whose annotated arguments are absent", () => {
    assert.equal(callHeaders({ inputSchema: schema({ q: { type: 'string' } }) }, { q: 'x' }), undefined);
    const tool = { inputSchema: schema({ region: { type: 'string', 'x-mcp-header': 'Region' } }) };
    assert.deepEqual(callHeaders(tool, {}), {});
    assert.deepEqual(callHeaders(tool, { region: 'eu' }), { 'mcp-param-region': 'eu' });
  });
});
