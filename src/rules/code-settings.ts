// An agent's code mode settings (`"code"` in its entry): which tools a program may call (`allow`),
// which wait for a person's approval when a program calls them (`approve`), and the limits of one
// run (`limits`: the sandbox's `CodeLimits` plus `runsInFlight`). `allow` and `approve` name tools
// as the agent's `approve` section does; a read-only tool (`readOnlyHint`) may be called by
// default, any other only when `allow` names it, always on top of the agent's own rules.
// docs/code-mode.md has the shape. Compiled into `CompiledAgent.code`. No I/O.

import { describeValue, isPlainObject } from '../config/issues.js';
import { compileApprovals, type ApprovalNeed, type ApprovalReport } from './approvals.js';
import { DEFAULT_AGENT, type CodeLimitSettings, type CodeSettings, type Rules } from './compiled.js';

const CODE_KEYS = new Set(['allow', 'approve', 'limits']);

/** Each limit a rules file may set, with the largest value it may take (a bound, not a default). */
const LIMIT_BOUNDS = Object.freeze({
  wallMs: 10 * 60_000,
  memoryBytes: 1024 * 1024 * 1024,
  innerCalls: 10_000,
  callsInFlight: 64,
  codeBytes: 1024 * 1024,
  returnBytes: 16 * 1024 * 1024,
  innerResultBytes: 64 * 1024 * 1024,
  consoleBytes: 1024 * 1024,
  runsInFlight: 64,
});

/** The smallest memory a run may be given: below it the engine cannot start. */
const MIN_MEMORY_BYTES = 4 * 1024 * 1024;

type CodeLimitName = keyof typeof LIMIT_BOUNDS;

/** Reads one agent's `code` section (at `agents.ID.code`); undefined when absent or wrong. */
export function readCodeSettings(id: string, value: unknown, report: ApprovalReport): CodeSettings | undefined {
  const base = ['agents', id, 'code'];
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    report.error(base, `expected an object with "allow", "approve" and/or "limits", got ${describeValue(value)}`);
    return undefined;
  }
  for (const key of Object.keys(value))
    if (!CODE_KEYS.has(key)) report.warn([...base, key], `unknown key "${key}" in code of agent "${id}" is ignored`);
  const owner = `agent "${id}" code`;
  const allow = compileApprovals(value.allow, [...base, 'allow'], owner, report);
  const approve = compileApprovals(value.approve, [...base, 'approve'], owner, report);
  const limits = readLimits(value.limits, [...base, 'limits'], report);
  return Object.freeze({ allow, approve, limits });
}

function readLimits(value: unknown, at: readonly PropertyKey[], report: ApprovalReport): CodeLimitSettings {
  const limits: Partial<Record<CodeLimitName, number>> = {};
  if (value === undefined) return Object.freeze(limits);
  const names = Object.keys(LIMIT_BOUNDS).join(', ');
  if (!isPlainObject(value)) {
    report.error(at, `expected an object of limits (${names}), got ${describeValue(value)}`);
    return Object.freeze(limits);
  }
  for (const [key, n] of Object.entries(value)) {
    if (!Object.hasOwn(LIMIT_BOUNDS, key)) {
      report.error([...at, key], `unknown code limit "${key}"; the limits are ${names}`);
      continue;
    }
    const name = key as CodeLimitName;
    const max = LIMIT_BOUNDS[name];
    const min = name === 'memoryBytes' ? MIN_MEMORY_BYTES : 1;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
      report.error([...at, key], `expected a whole number from ${min} to ${max}, got ${describeValue(n)}`);
      continue;
    }
    limits[name] = n;
  }
  return Object.freeze(limits);
}

/** The code settings of an agent's entry (its own, else `default`'s); undefined: none, or no rules file. */
export function codeSettingsOf(rules: Rules, agent: string): CodeSettings | undefined {
  if (rules.open) return undefined;
  return (rules.agents.get(agent) ?? rules.agents.get(DEFAULT_AGENT))?.code;
}

/**
 * Whether a program may call the tool: one annotated read-only may, any other only where the
 * agent's `code.allow` names it (with its arguments). Asked on top of the agent's own rules.
 */
export function codeMayCall(
  settings: CodeSettings | undefined,
  call: { readonly server: string; readonly tool: string; readonly readOnly: boolean; readonly args?: Readonly<Record<string, unknown>> },
): boolean {
  if (call.readOnly) return true;
  return settings !== undefined && settings.allow.some((rule) => rule.matches(call.server, call.tool, call.args));
}

/** The approval a call from code waits for under the agent's `code.approve` (undefined: none). */
export function codeApprovalFor(
  rules: Rules,
  agent: string,
  call: { readonly server: string; readonly tool: string; readonly args: Readonly<Record<string, unknown>> | undefined },
): ApprovalNeed | undefined {
  const settings = codeSettingsOf(rules, agent);
  if (settings === undefined) return undefined;
  for (const rule of settings.approve)
    if (rule.matches(call.server, call.tool, call.args)) return { timeoutMs: rule.timeoutMs, rule: rule.source };
  return undefined;
}
