// The rules' `approve` section: which calls wait for a person's approval before they reach their
// server. It sits in an agent's entry or a grant, beside `allow` and `deny`, and names tools the way
// `allow.tools` does — by server, then tool names or globs (globs.ts) — optionally narrowed by the
// call's arguments:
//
//   "approve": {"github": ["delete_*", {"tool": "push", "when": {"args": {"branch": "main"}}, "timeoutSeconds": 600},
//                          {"tool": "force_push", "unless": {"args": {"force": false}}}]}
//
// A server key may be a glob too ("*": every server). An argument test reads one top-level
// argument (argument-tests.ts): `when.args` tests match the value written and whatever a lenient
// server reads as it, and every one must hold for the call to wait; `unless.args` tests match only
// the exact value, and the call runs at once only when every one holds. Approval is asked on top of
// `allow`: a denied call is refused before any approval is asked. Pure: no I/O.

import { describeValue, isPlainObject } from '../config/issues.js';
import { exactTest, lenientTest, type ArgumentTest } from './argument-tests.js';
import { matchedGrants, type Claims } from './decide.js';
import { DEFAULT_AGENT, NO_APPROVALS, type ApprovalRule, type Rules } from './compiled.js';
import { globToRegExp, isGlob } from './globs.js';

/** How long a call waits for its approval unless the rule says otherwise. */
const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60_000;
/** The longest wait a rule may ask for (a day). */
const MAX_TIMEOUT_SECONDS = 86_400;
const MAX_RULES = 256;
const RULE_KEYS = new Set(['tool', 'when', 'unless', 'timeoutSeconds']);

/** A call that needs approval: the first rule that matched it. */
export interface ApprovalNeed {
  readonly timeoutMs: number;
  /** The rule, in words, for logs and the console. */
  readonly rule: string;
}

export interface ApprovalReport {
  error(at: readonly PropertyKey[], message: string): void;
  warn(at: readonly PropertyKey[], message: string): void;
  /** Warns when a server name or glob names no server of `.mcp.json` (the file may be mid-edit). */
  checkServer(owner: string, name: string, at: readonly PropertyKey[]): void;
}

/** Validates and compiles one `approve` section (of `agents.ID` or `grants.NAME`, at `base`). */
export function compileApprovals(
  value: unknown,
  base: readonly PropertyKey[],
  owner: string,
  report: ApprovalReport,
): readonly ApprovalRule[] {
  if (value === undefined) return NO_APPROVALS;
  const shape =
    '{SERVER: [TOOL or {"tool": TOOL, "when": {"args": {NAME: VALUE}}, "unless": {"args": {NAME: VALUE}}, "timeoutSeconds": N}, …]}';
  if (!isPlainObject(value)) {
    report.error(base, `expected an object ${shape}, got ${describeValue(value)}`);
    return NO_APPROVALS;
  }
  const rules: ApprovalRule[] = [];
  for (const [server, list] of Object.entries(value)) {
    const at = [...base, server];
    if (server === '') {
      report.error(at, 'a server name must not be empty');
      continue;
    }
    report.checkServer(owner, server, at);
    if (!Array.isArray(list)) {
      report.error(
        at,
        `expected an array of tool names or patterns, or {"tool": …, "when": {"args": …}, "unless": {"args": …}} objects, got ${describeValue(list)}`,
      );
      continue;
    }
    list.forEach((item: unknown, i) => {
      if (rules.length >= MAX_RULES) return report.error([...at, i], `at most ${MAX_RULES} approval rules per ${owner}`);
      const rule = compileRule(server, item, [...at, i], `${owner} approve[${JSON.stringify(server)}][${i}]`, report);
      if (rule !== undefined) rules.push(rule);
    });
  }
  return Object.freeze(rules);
}

function compileRule(
  server: string,
  item: unknown,
  at: readonly PropertyKey[],
  source: string,
  report: ApprovalReport,
): ApprovalRule | undefined {
  let tool: unknown = item;
  let when: ArgumentTest[] = [];
  let unless: ArgumentTest[] = [];
  let timeoutMs = DEFAULT_APPROVAL_TIMEOUT_MS;
  if (isPlainObject(item)) {
    for (const key of Object.keys(item))
      if (!RULE_KEYS.has(key)) report.warn([...at, key], `unknown key ${JSON.stringify(key)} in an approval rule is ignored`);
    tool = item.tool;
    const readWhen = readArgs(item.when, [...at, 'when'], lenientTest, report);
    const readUnless = readArgs(item.unless, [...at, 'unless'], exactTest, report);
    if (readWhen === undefined || readUnless === undefined) return undefined;
    when = readWhen;
    unless = readUnless;
    const seconds = item.timeoutSeconds;
    if (seconds !== undefined) {
      if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_TIMEOUT_SECONDS) {
        report.error(
          [...at, 'timeoutSeconds'],
          `expected a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}, got ${describeValue(seconds)}`,
        );
        return undefined;
      }
      timeoutMs = Math.max(1, Math.round(seconds * 1000));
    }
  }
  if (typeof tool !== 'string' || tool === '') {
    report.error(
      isPlainObject(item) ? [...at, 'tool'] : at,
      `expected a tool name or pattern (a non-empty string), got ${describeValue(tool)}`,
    );
    return undefined;
  }
  const serverTest = nameTest(server);
  const toolTest = nameTest(tool);
  const names = (s: string, t: string): boolean => serverTest(s) && toolTest(t);
  return Object.freeze({
    server,
    tool,
    source,
    timeoutMs,
    testsArguments: when.length > 0 || unless.length > 0,
    names,
    matches: (s: string, t: string, args: Readonly<Record<string, unknown>> | undefined) =>
      names(s, t) && allHold(when, args) && !(unless.length > 0 && allHold(unless, args)),
  });
}

function allHold(tests: readonly ArgumentTest[], args: Readonly<Record<string, unknown>> | undefined): boolean {
  for (const test of tests) {
    const present = args !== undefined && Object.hasOwn(args, test.name);
    if (!test.holds(present ? args[test.name] : undefined, present)) return false;
  }
  return true;
}

/** `when` or `unless`: `{"args": {NAME: VALUE, …}}`; undefined after an error. */
function readArgs(
  value: unknown,
  at: readonly PropertyKey[],
  make: (name: string, expected: unknown) => ArgumentTest,
  report: ApprovalReport,
): ArgumentTest[] | undefined {
  if (value === undefined) return [];
  if (!isPlainObject(value)) {
    report.error(at, `expected {"args": {NAME: VALUE, …}}, got ${describeValue(value)}`);
    return undefined;
  }
  const word = String(at[at.length - 1]);
  for (const key of Object.keys(value))
    if (key !== 'args') report.warn([...at, key], `unknown key ${JSON.stringify(key)} in "${word}" is ignored (only "args" is read)`);
  const args = value.args;
  if (args === undefined) return [];
  if (!isPlainObject(args) || Object.keys(args).length === 0) {
    report.error(
      [...at, 'args'],
      word === 'when'
        ? `expected a non-empty object mapping argument names to the values (or string globs) that need approval, got ${describeValue(args)}`
        : `expected a non-empty object mapping argument names to the exact values (or string globs) that need no approval, got ${describeValue(args)}`,
    );
    return undefined;
  }
  const tests: ArgumentTest[] = [];
  for (const [name, expected] of Object.entries(args)) {
    if (name === '') {
      report.error([...at, 'args'], 'an argument name must not be empty');
      return undefined;
    }
    tests.push(Object.freeze(make(name, expected)));
  }
  return tests;
}

function nameTest(name: string): (value: string) => boolean {
  if (!isGlob(name)) return (value) => value === name;
  const regex = globToRegExp(name);
  return (value) => regex.test(value);
}

/**
 * Does this call need a person's approval? The rules of the agent's own entry (else `default`'s)
 * and of every grant its claims meet are read; the first rule that matches decides the wait.
 * Cheap when nothing asks for approval: one Map lookup and a length check.
 */
export function approvalFor(
  rules: Rules,
  agent: string,
  server: string,
  tool: string,
  args: Readonly<Record<string, unknown>> | undefined,
  claims?: Claims,
): ApprovalNeed | undefined {
  if (rules.open) return undefined;
  const own = rules.agents.get(agent) ?? rules.agents.get(DEFAULT_AGENT);
  const found = own === undefined ? undefined : first(own.approve, server, tool, args);
  if (found !== undefined) return found;
  if (claims === undefined || rules.grants.length === 0) return undefined;
  const met = new Set(matchedGrants(rules, claims));
  for (const grant of rules.grants) {
    if (!met.has(grant.id)) continue;
    const hit = first(grant.approve, server, tool, args);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

function first(
  list: readonly ApprovalRule[],
  server: string,
  tool: string,
  args: Readonly<Record<string, unknown>> | undefined,
): ApprovalNeed | undefined {
  for (const rule of list) if (rule.matches(server, tool, args)) return { timeoutMs: rule.timeoutMs, rule: rule.source };
  return undefined;
}

/**
 * Does a rule that tests arguments name this call's tool (in the agent's own entry, else
 * `default`'s, or in a grant its claims meet)? Then its arguments are checked against the tool's
 * input schema before any rule reads them: a value of another type than the schema's must not
 * slip past a test written for the right one.
 */
export function argumentsTested(rules: Rules, agent: string, server: string, tool: string, claims?: Claims): boolean {
  if (rules.open) return false;
  const names = (list: readonly ApprovalRule[]): boolean => list.some((rule) => rule.testsArguments && rule.names(server, tool));
  const own = rules.agents.get(agent) ?? rules.agents.get(DEFAULT_AGENT);
  if (own !== undefined && names(own.approve)) return true;
  if (claims === undefined || rules.grants.length === 0) return false;
  const met = new Set(matchedGrants(rules, claims));
  return rules.grants.some((grant) => met.has(grant.id) && names(grant.approve));
}
