// Code mode's compact tool texts: a declaration made from a tool's schemas (required and optional
// parameters, enums, nested objects bounded, the output type, flags) and a search hit in one line.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compactHit, declaration, summaryOf } from '../../../src/gateway/modes/tool-declarations.js';

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

  it('a hit is one line: name, required then optional parameters, first sentence', () => {
    assert.equal(compactHit(view), 'store__get_item(id, format?, dashed-name?, filter?) — Reads one item by its id.');
    assert.equal(summaryOf('x'.repeat(300)).length, 160);
  });
});
