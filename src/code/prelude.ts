// What a run's engine evaluates before the agent's program: the `tools` and `console` globals,
// built inside the sandbox around the two host functions it is handed (neither is ever on the
// global), and the helpers the host uses to read the program's answer. Everything crossing the
// boundary is a string or a number: the host never reads an object of the program's, and the
// program never holds one of the host's.

/** The file name the agent's program is evaluated under; stack frames in it are the agent's code. */
export const PROGRAM_FILE = 'program.js';
export const PRELUDE_FILE = 'prelude.js';

/** The program's body is wrapped on its own first line, so its line numbers are the agent's. */
export const PROGRAM_PREFIX = '(async function () {';
export const PROGRAM_SUFFIX = '\n})()';

/**
 * A function expression taking (hostCall, hostLog, toolsJson, consoleBytes) and returning [finish, describe, deliver]:
 * - hostCall(name, argsJson) → the call's number, by which its answer comes back (`deliver`);
 * - hostLog(level, text) → how many more bytes of console the host will keep (0: no more);
 * - toolsJson: [[name, server, tool], …];
 * - finish(value, limit) → '' for no value, else "<length>:<JSON text cut to limit + 1 characters>";
 * - describe(thrown) → JSON text {name, message, stack, code, server, tool}, each read defensively;
 * - deliver(number, answerJson) settles that call's promise with the answer's JSON text (a promise
 *   made and kept here, in the sandbox: the host hands in two primitives per answer, nothing more).
 * It takes the built-ins it relies on before the program runs, so a program that replaces
 * `JSON` or `Error` changes only its own view of them.
 */
export const PRELUDE = String.raw`(function (hostCall, hostLog, toolsJson, consoleBytes) {
  'use strict';
  const parse = JSON.parse, stringify = JSON.stringify, create = Object.create, freeze = Object.freeze;
  const defineProperty = Object.defineProperty, ErrorType = Error, TypeErrorType = TypeError, StringType = String;
  const PromiseType = Promise;
  // The calls waiting for their answer, by number: a record without a prototype, which no change a
  // program makes to the built-ins reaches.
  const waiting = create(null);

  delete globalThis.Atomics;
  delete globalThis.SharedArrayBuffer;

  function failure(site, answer) {
    site.message = StringType(answer.message);
    site.name = answer.code === 'TOOL_ERROR' ? 'ToolError' : 'RefusalError';
    site.code = answer.code;
    if (answer.server !== undefined) site.server = answer.server;
    if (answer.tool !== undefined) site.tool = answer.tool;
    if (answer.text !== undefined) site.text = answer.text;
    if (answer.result !== undefined) site.result = answer.result;
    return site;
  }

  async function call(name, args) {
    // Made before the wait, so an uncaught refusal points at the agent's line that called.
    const site = new ErrorType('');
    if (typeof name !== 'string') throw new TypeErrorType('tools.call(name, args) takes the exact tool name, such as "server__tool"');
    const text = args === undefined ? '{}' : stringify(args);
    if (typeof text !== 'string') throw new TypeErrorType('the arguments of ' + name + ' are not a JSON value');
    const id = hostCall(name, text);
    const answer = parse(await new PromiseType(function (resolve) { waiting[id] = resolve; }));
    if (answer.ok) return answer.result;
    throw failure(site, answer);
  }

  const tools = create(null);
  for (const [name, server, tool] of parse(toolsJson)) {
    if (server === 'call') continue;
    let group = tools[server];
    if (group === undefined) {
      group = create(null);
      tools[server] = group;
    }
    const one = function (args) { return call(name, args); };
    defineProperty(one, 'name', { value: tool });
    group[tool] = one;
  }
  for (const server of Object.keys(tools)) freeze(tools[server]);
  tools.call = function (name, args) { return call(name, args); };
  freeze(tools);

  let room = consoleBytes;
  function format(value) {
    if (typeof value === 'string') return value;
    try {
      const text = stringify(value);
      if (typeof text === 'string') return text;
    } catch {}
    try { return StringType(value); } catch { return '[value that cannot be printed]'; }
  }
  function logger(level) {
    return function (...values) {
      if (room <= 0) return;
      let line = level === 'log' || level === 'info' ? '' : level + ': ';
      for (let i = 0; i < values.length; i++) {
        line += (i === 0 ? '' : ' ') + format(values[i]);
        if (line.length > room) break;
      }
      room = hostLog(level, line.length > room ? line.slice(0, room + 1) : line);
    };
  }
  const console = freeze({ log: logger('log'), info: logger('info'), debug: logger('debug'), warn: logger('warn'), error: logger('error') });

  defineProperty(globalThis, 'tools', { value: tools, writable: false, enumerable: false, configurable: false });
  defineProperty(globalThis, 'console', { value: console, writable: false, enumerable: false, configurable: false });

  function finish(value, limit) {
    const text = stringify(value);
    if (typeof text !== 'string') return '';
    return text.length + ':' + (text.length > limit ? text.slice(0, limit + 1) : text);
  }

  function read(thrown, key) {
    try {
      const value = thrown[key];
      return value === undefined ? undefined : StringType(value).slice(0, 4000);
    } catch {
      return undefined;
    }
  }
  function describe(thrown) {
    if (thrown === null || (typeof thrown !== 'object' && typeof thrown !== 'function')) {
      let message = '';
      try { message = StringType(thrown).slice(0, 4000); } catch {}
      return stringify({ message });
    }
    return stringify({
      name: read(thrown, 'name'),
      message: read(thrown, 'message'),
      stack: read(thrown, 'stack'),
      code: read(thrown, 'code'),
      server: read(thrown, 'server'),
      tool: read(thrown, 'tool'),
    });
  }

  function deliver(id, text) {
    const resolve = waiting[id];
    if (resolve === undefined) return;
    delete waiting[id];
    resolve(text);
  }

  return [finish, describe, deliver];
})`;
