// The error registry (src/errors.ts): the JSON-RPC error object an agent sees — numeric code from
// the registry, the stable MCPG code in data.code, the server to blame, detail merged, never a stack.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError, JSONRPC, asGatewayError } from '../../../src/errors.js';
import { errorRegistry } from '../../helpers/error-registry.js';

/** A code of the registry: what a GatewayError carries. */
type ErrorCode = GatewayError['code'];
/** The JSON-RPC code src/errors.ts registers for `code`. */
const registered = (code: ErrorCode): number | undefined => errorRegistry().find((entry) => entry.code === code)?.rpc;

void describe('GatewayError.toJsonRpc', { timeout: 5000 }, () => {
  void it('maps every code to its registered JSON-RPC code', { timeout: 5000 }, () => {
    for (const { code: name, rpc } of errorRegistry()) {
      const code = name as ErrorCode;
      const err = new GatewayError(code, 'm');
      assert.equal(err.rpcCode, rpc);
      assert.deepEqual(err.toJsonRpc(), { code: rpc, message: 'm', data: { code } });
    }
  });

  void it("maps an agent's mistakes to -326xx and a server's failures to distinct codes", { timeout: 5000 }, () => {
    assert.equal(new GatewayError('MCPG_TOOL_NOT_FOUND', 'x').rpcCode, JSONRPC.INVALID_PARAMS);
    assert.equal(new GatewayError('MCPG_INVALID_REQUEST', 'x').rpcCode, JSONRPC.INVALID_REQUEST);
    const serverCodes = (
      ['MCPG_SERVER_UNAVAILABLE', 'MCPG_SERVER_TIMEOUT', 'MCPG_SERVER_BAD_RESPONSE', 'MCPG_SERVER_START_FAILED'] as const
    ).map(registered);
    assert.deepEqual(serverCodes, [-31011, -31012, -31013, -31014]);
  });

  void it('names the server and merges detail into data', { timeout: 5000 }, () => {
    const err = new GatewayError('MCPG_SERVER_TIMEOUT', 'server "fs" did not answer', { server: 'fs', detail: { timeoutMs: 500 } });
    assert.deepEqual(err.toJsonRpc(), {
      code: -31012,
      message: 'server "fs" did not answer',
      data: { code: 'MCPG_SERVER_TIMEOUT', server: 'fs', timeoutMs: 500 },
    });
  });

  void it('keeps data.code and data.server authoritative over same-named detail keys', { timeout: 5000 }, () => {
    const err = new GatewayError('MCPG_SERVER_UNAVAILABLE', 'gone', {
      server: 'fs',
      detail: { code: 'ENOENT', server: 'other', exitCode: 1 },
    });
    assert.deepEqual(err.toJsonRpc().data, { code: 'MCPG_SERVER_UNAVAILABLE', server: 'fs', exitCode: 1 });
  });

  void it('never puts a stack or the cause on the wire', { timeout: 5000 }, () => {
    const cause = new Error('secret internals');
    const wire = JSON.stringify(new GatewayError('MCPG_INTERNAL', 'bug in x', { cause }).toJsonRpc());
    assert.equal(wire, '{"code":-32603,"message":"bug in x","data":{"code":"MCPG_INTERNAL"}}');
  });

  void it('is an Error with name, code, server and cause', { timeout: 5000 }, () => {
    const cause = new Error('c');
    const err = new GatewayError('MCPG_USAGE', 'bad flag', { server: 's', cause });
    assert.ok(err instanceof Error);
    assert.deepEqual([err.name, err.code, err.server, err.message, err.cause], ['GatewayError', 'MCPG_USAGE', 's', 'bad flag', cause]);
    assert.equal(new GatewayError('MCPG_USAGE', 'x').cause, undefined);
  });
});

void describe('asGatewayError', { timeout: 5000 }, () => {
  void it('keeps a GatewayError as it is', { timeout: 5000 }, () => {
    const err = new GatewayError('MCPG_SERVER_TIMEOUT', 't', { server: 'fs' });
    assert.equal(asGatewayError(err, 'MCPG_INTERNAL', 'other'), err);
  });

  void it('wraps an Error with the fallback code, server and cause', { timeout: 5000 }, () => {
    const cause = new TypeError('x is not a function');
    const err = asGatewayError(cause, 'MCPG_SERVER_BAD_RESPONSE', 'fs');
    assert.deepEqual([err.code, err.message, err.server, err.cause], ['MCPG_SERVER_BAD_RESPONSE', 'x is not a function', 'fs', cause]);
    assert.deepEqual(err.toJsonRpc(), {
      code: -31013,
      message: 'x is not a function',
      data: { code: 'MCPG_SERVER_BAD_RESPONSE', server: 'fs' },
    });
  });

  void it('defaults to MCPG_INTERNAL and stringifies non-errors', { timeout: 5000 }, () => {
    const err = asGatewayError('just a string');
    assert.deepEqual([err.code, err.message, err.server], ['MCPG_INTERNAL', 'just a string', undefined]);
    assert.equal(asGatewayError(42).message, '42');
  });
});
