// The direct look at a listed tool (servers/lists.ts `plainTool`) that spares the tools/list schema
// walk: it may accept only what the schema accepts. Every field of a realistic tool is replaced by
// wrong and unusual values (and removed), and each variant the look accepts must pass the schema.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { plainTool } from '../../../src/servers/lists.js';
import { serverSchemas } from '../../../src/servers/sdk-schemas.js';
import { realisticTool } from '../../../bench/bench-tool.js';

const VALUES: unknown[] = [
  undefined,
  null,
  0,
  1.5,
  '',
  'text',
  true,
  false,
  [],
  ['a'],
  [1],
  {},
  { type: 'object' },
  { type: 'string' },
  { $schema: 1 },
  { $schema: 'x' },
];

const { tools: toolsResult } = await serverSchemas();
const schemaAccepts = (tool: unknown): boolean => toolsResult.safeParse({ tools: [tool] }).success;

function variants(base: Record<string, unknown>): unknown[] {
  const out: unknown[] = [base, null, [], 'tool', { ...base, extra: 1 }];
  const fields = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'icons', 'execution', '_meta'];
  for (const field of fields) for (const value of VALUES) out.push({ ...base, [field]: value });
  const input = base.inputSchema as Record<string, unknown>;
  for (const field of ['type', 'properties', 'required'])
    for (const value of VALUES) out.push({ ...base, inputSchema: { ...input, [field]: value } });
  const annotations = { title: 'T', readOnlyHint: true };
  for (const field of ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
    for (const value of VALUES) out.push({ ...base, annotations: { ...annotations, [field]: value } });
  }
  out.push(
    { ...base, inputSchema: { ...input, required: ['a', 2] } },
    { ...base, icons: [{ src: 'x' }] },
    { ...base, execution: { taskSupport: 'optional' } },
  );
  return out;
}

void describe('plainTool: the direct look at a listed tool', () => {
  void it('accepts a realistic tool, so the schema walk is spared for one', () => {
    const tool = JSON.parse(JSON.stringify(realisticTool(3))) as unknown;
    assert.equal(plainTool(tool), true);
    assert.equal(schemaAccepts(tool), true);
  });

  void it('accepts nothing the tools/list schema rejects', () => {
    const base = JSON.parse(JSON.stringify(realisticTool(7))) as Record<string, unknown>;
    let accepted = 0;
    let rejected = 0;
    for (const tool of variants(base)) {
      if (plainTool(tool)) {
        accepted++;
        assert.equal(schemaAccepts(tool), true, `accepted by the look, rejected by the schema: ${JSON.stringify(tool)}`);
      } else if (!schemaAccepts(tool)) rejected++;
    }
    assert.ok(accepted > 20 && rejected > 20, `both sides exercised (${accepted} accepted, ${rejected} rejected by both)`);
  });
});
