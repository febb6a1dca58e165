// One interceptor chain run (policy/interceptor-chain.ts) over in-process interceptors: the order
// the specification defines for each phase, mutators by priority then name, only an active error
// blocks, audit mode computes and drops, a failure blocks unless fail-open, a timeout is a failure,
// and mutations apply whole or not at all. The interceptors' wire is covered by the conformance
// fixtures (test/conformance/interceptors.test.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runChain, type ChainEntry } from '../../../src/policy/interceptor-chain.js';

type Judge = (payload: Record<string, unknown>) => unknown;

function entry(name: string, type: 'validation' | 'mutation', judge: Judge, more: Partial<ChainEntry> = {}, seen?: string[]): ChainEntry {
  return {
    name,
    host: 'h',
    type,
    mode: 'active',
    failOpen: false,
    priority: 0,
    timeoutMs: 1000,
    invoke: (params) => {
      seen?.push(name);
      return Promise.resolve().then(() => judge(params.payload as Record<string, unknown>));
    },
    ...more,
  };
}

const append =
  (tag: string): Judge =>
  (p) => ({ modified: true, payload: { ...p, trail: `${typeof p.trail === 'string' ? p.trail : ''}${tag}` } });
const valid: Judge = () => ({ valid: true });
const invalid =
  (severity?: string): Judge =>
  () => ({ valid: false, ...(severity !== undefined && { severity }), messages: [{ message: 'no', severity: 'error' }] });

test('a request is mutated (by priority, then name), then validated on the mutated payload', async () => {
  const seen: string[] = [];
  const entries = [
    entry('check', 'validation', (p) => ({ valid: p.trail === 'abc' }), {}, seen),
    entry('c', 'mutation', append('c'), { priority: 5 }, seen),
    entry('b', 'mutation', append('b'), {}, seen),
    entry('a', 'mutation', append('a'), {}, seen),
  ];
  const out = await runChain(entries, { event: 'tools/call', phase: 'request', payload: {} });
  assert.equal(out.decision, 'allow');
  assert.deepEqual(out.payload, { trail: 'abc' });
  assert.equal(out.mutated, true);
  assert.deepEqual(seen, ['a', 'b', 'c', 'check']);
});

test('an answer is validated first, on what the server sent; the mutators never run when it is refused', async () => {
  const seen: string[] = [];
  const entries = [entry('m', 'mutation', append('m'), {}, seen), entry('v', 'validation', (p) => ({ valid: p.trail === 'm' }), {}, seen)];
  const out = await runChain(entries, { event: 'tools/call', phase: 'response', payload: {} });
  assert.equal(out.decision, 'deny');
  assert.equal(out.blockedBy?.interceptor, 'v');
  assert.deepEqual(seen, ['v']);
});

test('only an active error blocks: warn and info pass, audit mode never blocks and its mutation is dropped', async () => {
  for (const severity of ['warn', 'info']) {
    const out = await runChain([entry('v', 'validation', invalid(severity))], { event: 'e', phase: 'request', payload: {} });
    assert.equal(out.decision, 'allow', severity);
  }
  const noSeverity = await runChain([entry('v', 'validation', invalid())], { event: 'e', phase: 'request', payload: {} });
  assert.equal(noSeverity.decision, 'deny', 'valid: false without a severity is an error');
  const audited = await runChain(
    [entry('v', 'validation', invalid('error'), { mode: 'audit' }), entry('m', 'mutation', append('m'), { mode: 'audit' })],
    {
      event: 'e',
      phase: 'request',
      payload: { x: 1 },
    },
  );
  assert.equal(audited.decision, 'allow');
  assert.deepEqual(audited.payload, { x: 1 });
  assert.equal(audited.mutated, false);
  assert.deepEqual(
    audited.verdicts.map((v) => [v.interceptor, v.outcome, v.mode]),
    [
      ['m', 'modified', 'audit'],
      ['v', 'invalid', 'audit'],
    ],
  );
});

test('a failure blocks unless fail-open; a timeout is a failure; a blocked chain applies no mutation', async () => {
  const crash: Judge = () => {
    throw new Error('boom');
  };
  const closed = await runChain([entry('m', 'mutation', append('m')), entry('x', 'validation', crash)], {
    event: 'e',
    phase: 'request',
    payload: {},
  });
  assert.equal(closed.decision, 'deny');
  assert.deepEqual(closed.payload, {}, 'the mutation that ran is not applied');
  assert.equal(closed.blockedBy?.reason, 'boom');
  const open = await runChain([entry('x', 'validation', crash, { failOpen: true })], { event: 'e', phase: 'request', payload: {} });
  assert.equal(open.decision, 'allow');
  const start = performance.now();
  const hung = await runChain([entry('h', 'validation', () => new Promise(() => undefined), { timeoutMs: 50 })], {
    event: 'e',
    phase: 'request',
    payload: {},
  });
  assert.equal(hung.decision, 'deny');
  assert.match(hung.blockedBy?.reason ?? '', /no answer within 50 ms/);
  assert.ok(performance.now() - start < 2000);
  const wrong = await runChain([entry('w', 'mutation', () => ({ changed: true }))], { event: 'e', phase: 'request', payload: {} });
  assert.equal(wrong.blockedBy?.reason, 'not a mutation result');
});

test('each invocation carries the event, phase, payload, timeout, context and _meta', async () => {
  let params: Record<string, unknown> | undefined;
  const e: ChainEntry = { ...entry('v', 'validation', valid), invoke: (p) => ((params = p), Promise.resolve({ valid: true })) };
  await runChain([e], { event: 'prompts/get', phase: 'response', payload: { a: 1 }, context: { sessionId: 's' }, meta: { k: 'v' } });
  assert.deepEqual(params, {
    name: 'v',
    event: 'prompts/get',
    phase: 'response',
    payload: { a: 1 },
    timeoutMs: 1000,
    context: { sessionId: 's' },
    _meta: { k: 'v' },
  });
});
