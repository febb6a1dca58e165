// The task table (gateway/routing/tasks.ts): public ids that never clash between servers, a task known only
// to its owner, records ended by the task's ttl, bounded per owner, and the tasks capability declared
// only as far as servers support it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/observability/logger.js';
import { GatewayError } from '../../../src/errors.js';
import { TaskTable, recordCreatedTask, renameTaskAnswer, taskOf, tasksCapability } from '../../../src/gateway/routing/tasks.js';

/** The key of a result's related task in `_meta`, as the specification names it. */
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

void describe('TaskTable', { timeout: 5000 }, () => {
  void it('names each server task SERVER:ID, finds it for its owner only, and renames answers back', { timeout: 5000 }, () => {
    const table = new TaskTable(silentLogger);
    const result: Record<string, unknown> = {
      task: { taskId: '1', status: 'working', ttl: 1000 },
      _meta: { [RELATED_TASK]: { taskId: '1' } },
    };
    assert.ok(recordCreatedTask(table, 'agent:a', 'one', result));
    assert.deepEqual(result, { task: { taskId: 'one:1', status: 'working', ttl: 1000 }, _meta: { [RELATED_TASK]: { taskId: 'one:1' } } });
    assert.equal(table.add('agent:a', 'two', '1', 1000), 'two:1');
    const record = taskOf(table, 'agent:a', 'tasks/get', 'one:1');
    assert.ok(!(record instanceof GatewayError));
    assert.equal(record.serverTaskId, '1');
    const answer: Record<string, unknown> = { taskId: '1', status: 'completed' };
    assert.ok(renameTaskAnswer(answer, record));
    assert.equal(answer.taskId, 'one:1');
    const other = taskOf(table, 'agent:b', 'tasks/get', 'one:1');
    assert.ok(other instanceof GatewayError && other.code === 'MCPG_INVALID_PARAMS' && /unknown task: one:1/.test(other.message));
    assert.equal(table.ofServerTask('one', '1').length, 1);
    assert.equal(recordCreatedTask(table, 'agent:a', 'one', { content: [] }), false);
  });

  void it("forgets a task past its ttl and a minute's grace", { timeout: 5000 }, () => {
    let now = 0;
    const table = new TaskTable(silentLogger, () => now);
    table.add('agent:a', 'one', 'x', 1000);
    now = 60_000;
    assert.ok(table.find('agent:a', 'one:x'));
    now = 61_001;
    assert.equal(table.find('agent:a', 'one:x'), undefined);
    assert.equal(table.size, 0);
  });

  void it('keeps at most 1,000 tasks per owner, the oldest forgotten first', { timeout: 5000 }, () => {
    const table = new TaskTable(silentLogger);
    for (let i = 0; i < 1001; i++) table.add('agent:a', 's', String(i), 60_000);
    table.add('agent:b', 's', 'b', 60_000);
    assert.equal(table.ofOwner('agent:a').length, 1000);
    assert.equal(table.find('agent:a', 's:0'), undefined);
    assert.ok(table.find('agent:a', 's:1000'));
    assert.ok(table.find('agent:b', 's:b'));
  });
});

void describe('tasksCapability', { timeout: 5000 }, () => {
  void it('declares tools/call tasks, list and cancel only as far as some server supports them', { timeout: 5000 }, () => {
    assert.equal(tasksCapability([undefined, { list: {} }]), undefined);
    assert.deepEqual(tasksCapability([{ requests: { tools: { call: {} } } }]), { requests: { tools: { call: {} } } });
    assert.deepEqual(
      tasksCapability([
        { list: {}, requests: { sampling: { createMessage: {} } } },
        { cancel: {}, requests: { tools: { call: {} } } },
      ]),
      { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    );
  });
});
