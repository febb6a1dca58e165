// What an agent declared of itself (gateway/session/agent-declaration.ts): a log level asked by name
// keeps its rank and its name, a level that is none changes nothing, a modern request's envelope
// replaces the capabilities and headers, and URL elicitation counts only once the agent initialized.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentDeclaration } from '../../../src/gateway/session/agent-declaration.js';

test('a log level is kept by rank and by name; one that is no level changes nothing', { timeout: 5_000 }, () => {
  const declared = new AgentDeclaration();
  assert.equal(declared.logRank, undefined);
  assert.equal(declared.logLevel, undefined);
  assert.equal(declared.askLevel('warning'), true);
  assert.equal(declared.logLevel, 'warning');
  const rank = declared.logRank;
  assert.equal(declared.askLevel('loud'), false);
  assert.equal(declared.askLevel(3), false);
  assert.equal(declared.askLevel('__proto__'), false);
  assert.equal(declared.logRank, rank);
  assert.equal(declared.logLevel, 'warning');
  assert.ok(declared.askLevel('debug'));
  assert.ok(declared.logRank! < rank!);
});

test("a modern request's envelope: its capabilities and headers replace the last, its level is asked", { timeout: 5_000 }, () => {
  const declared = new AgentDeclaration();
  declared.adopt({
    protocolVersion: '2026-07-28',
    capabilities: { roots: {}, extensions: { 'io.modelcontextprotocol/ui': {} } },
    logLevel: 'error',
    paramHeaders: { 'Mcp-Param-Region': 'eu' },
  });
  assert.equal(declared.hasRoots, true);
  assert.deepEqual(declared.extensions, { 'io.modelcontextprotocol/ui': {} });
  assert.equal(declared.logLevel, 'error');
  assert.deepEqual(declared.paramHeaders, { 'Mcp-Param-Region': 'eu' });
  declared.adopt({ protocolVersion: '2026-07-28', capabilities: {} });
  assert.equal(declared.hasRoots, false);
  assert.equal(declared.extensions, undefined);
  assert.equal(declared.paramHeaders, undefined);
  assert.equal(declared.logLevel, 'error', 'a request without a level keeps the one asked');
});

test('URL elicitation is taken only from an agent that initialized and declared it', { timeout: 5_000 }, () => {
  const declared = new AgentDeclaration();
  declared.capabilities = { elicitation: { url: {} } };
  assert.equal(declared.takesUrlElicitation, false);
  declared.initialized = true;
  assert.equal(declared.takesUrlElicitation, true);
  declared.capabilities = { elicitation: {} };
  assert.equal(declared.takesUrlElicitation, false);
});
