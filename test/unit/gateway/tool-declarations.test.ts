// Code mode's compact tool texts: a declaration made from a tool's schemas (required and optional
// parameters, enums, nested objects bounded, the output type, flags) and a search hit in one line.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compactHit, declaration, hitOf, summaryOf } from '../../../src/gateway/modes/tool-declarations.js';

const view = {
  name: 'store__get_item',
  description: 'Reads one item by its id. Returns its name and size.\nMore text.',
  annotations: { readOnlyHint: true },
  inputSchema: {
    type: 'object',
    properties: {
      id: { type: 'integer', description: 'The id.' },
      format: { type: 'string', enum: ['short', 'long'] },
      'dashed-name': { type: ['string', 'null'] },
      filter: {
        type: 'object',
        properties: { tags: { type: 'array', items: { type: 'string' } }, deep: { type: 'object', properties: { x: { type: 'string' } } } },
      },
    },
    required: ['id'],
  },
  outputSchema: { type: 'object', properties: { name: { type: 'string' }, size: { type: 'number' } }, required: ['name'] },
};

describe('tool declarations', () => {
  it('a declaration: summary, flags, typed arguments (required, optional, enums, nesting bounded), output type', () => {
    const text = declaration(
      view,
      { name: 'store__get_item', server: 'store', tool: 'get_item' },
      { needsApproval: true, notFromCode: false },
    );
    assert.equal(
      text,
      '/** Reads one item by its id. [read-only] [needs approval] */\n' +
        'tools.store.get_item(args: {id: number /* The id. */; format?: "short"|"long"; "dashed-name"?: string|null; ' +
        'filter?: {tags?: string[]; deep?: {…}}}): Promise<{name: string; size?: number}>',
    );
  });

  it('a name that is no identifier is called through tools.call; no output schema: CallToolResult', () => {
    const text = declaration(
      { name: 'my-server__do it', inputSchema: { type: 'object' } },
      { name: 'my-server__do it', server: 'my-server', tool: 'do it' },
      { needsApproval: false, notFromCode: true },
    );
    assert.equal(
      text,
      '/** [not callable from code] */\ntools.call("my-server__do it", args: Record<string, unknown>): Promise<CallToolResult>',
    );
  });

  it('a hit is one line: name, required then optional parameters with short types and enums, first sentence', () => {
    assert.equal(
      compactHit(view),
      'store__get_item(id: number, format?: "short"|"long", dashed-name?: string|null, filter?: object) — Reads one item by its id.',
    );
    assert.equal(summaryOf('x'.repeat(300)).length, 160);
    // The nested object's fields were left out: the hit says it was shortened.
    assert.equal(hitOf(view).shortened, true);
    assert.equal(
      hitOf({ name: 'a', description: 'Does a.', inputSchema: { type: 'object', properties: { x: { type: 'string' } } } }).shortened,
      false,
    );
  });

  it('a hit never leaves out a required parameter; optional ones past eight, and long enums, are cut and flagged', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 12; i++) properties[`opt${i}`] = { type: 'string' };
    for (let i = 0; i < 12; i++) properties[`req${i}`] = { type: 'integer' };
    properties.mode = { type: 'string', enum: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] };
    properties.ids = { type: 'array', items: { type: 'integer' } };
    const required = [...Array.from({ length: 12 }, (_, i) => `req${i}`), 'mode', 'ids'];
    const hit = hitOf({ name: 'big', description: 'Big tool', inputSchema: { type: 'object', properties, required } });
    for (const name of required) assert.ok(hit.signature.includes(`${name}: `), `${name} is in ${hit.signature}`);
    assert.match(hit.signature, /mode: string…/);
    assert.match(hit.signature, /ids: number\[\]/);
    assert.equal((hit.signature.match(/\?: /g) ?? []).length, 8);
    assert.ok(hit.signature.endsWith(', …)'), hit.signature);
    assert.equal(hit.shortened, true);
    assert.equal(hit.line, `big${hit.signature} — Big tool`);
  });
});
