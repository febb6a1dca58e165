// The compiled form of `gateway-rules.json`: the deeply frozen Rules snapshot that decide.ts reads
// (schema.ts builds it), and OPEN_RULES for when there is no rules file.
// `Rules`, `CompiledAgent`, `CompiledSide`, `CompiledGrant`, `ClaimTest`, `DEFAULT_AGENT` and
// `OPEN_RULES`; the frozen collections are frozen.ts's.

import type { ConfigIssue } from '../config/types.js';
import type { AuthConfig } from './auth-config.js';
import { frozenMap } from './frozen.js';
import { compileMatcher, type Matcher } from './globs.js';
import type { HeaderSet } from './server-headers.js';
import type { CompiledLimits } from './limits.js';
import { GuardBook } from '../guards/guard-plan.js';
import type { InterceptorBinding } from './interceptors-config.js';
import { DEFAULT_GUARD_SETTINGS } from '../guards/guard-settings.js';
import type { CompiledView } from './views.js';
import type { ModeSettings } from './agent-mode.js';

/** One side (`allow` or `deny`) of an agent's rules. */
export interface CompiledSide {
  readonly servers: Matcher;
  /** Server name (exact) → the tools of that server this side names. */
  readonly tools: ReadonlyMap<string, Matcher>;
  /** Server name (exact, or `*` for every server) → globs over the paths of its skills (`skills`). */
  readonly skills: ReadonlyMap<string, Matcher>;
}

/** An agent's `skillOptions`: whether it is shown "dynamic" (unpinnable) skills, and whether `allowed-tools` is checked. */
export interface SkillOptions {
  readonly dynamic: boolean;
  readonly allowedTools: 'check' | 'ignore';
}

/** One compiled rule of an `approve` section (approvals.ts): calls it matches wait for a person's approval. */
export interface ApprovalRule {
  /** The server key and tool as written. */
  readonly server: string;
  readonly tool: string;
  /** Where it was written, for messages: `agent "x" approve["github"][1]`. */
  readonly source: string;
  readonly timeoutMs: number;
  /** It tests arguments (`when.args` or `unless.args`), so whether it applies depends on their types. */
  readonly testsArguments: boolean;
  /** It names this server and tool, whatever the arguments. */
  readonly names: (server: string, tool: string) => boolean;
  readonly matches: (server: string, tool: string, args: Readonly<Record<string, unknown>> | undefined) => boolean;
}

export const NO_APPROVALS: readonly ApprovalRule[] = Object.freeze([]);

/** The limits of a code-mode run an agent's rules set (code-settings.ts; a name left out: the sandbox's default). */
export type CodeLimitSettings = Readonly<
  Partial<
    Record<
      | 'wallMs'
      | 'memoryBytes'
      | 'innerCalls'
      | 'callsInFlight'
      | 'codeBytes'
      | 'returnBytes'
      | 'innerResultBytes'
      | 'consoleBytes'
      | 'runsInFlight',
      number
    >
  >
>;

/** An agent's `code` section (code-settings.ts): what its programs may call, and a run's limits. */
export interface CodeSettings {
  /** Tools (beyond the read-only ones) a program may call; empty: none. */
  readonly allow: readonly ApprovalRule[];
  /** Tools that wait for a person's approval when a program calls them. */
  readonly approve: readonly ApprovalRule[];
  readonly limits: CodeLimitSettings;
}

export interface CompiledAgent {
  readonly id: string;
  readonly allow: CompiledSide;
  readonly deny: CompiledSide;
  /** The calls that wait for a person's approval (`approve`); empty: none. */
  readonly approve: readonly ApprovalRule[];
  /** `sha256:<64 lowercase hex>` hashes of the agent's static bearer tokens (docs/architecture.md "Agent identity"). */
  readonly tokens: readonly string[];
  /**
   * The agent's own headers per remote server (`serverHeaders`, `${VAR}` expanded at load): sent
   * only on its own pooled connections. Secret: never logged nor shown.
   */
  readonly serverHeaders: ReadonlyMap<string, HeaderSet>;
  /** Its own mode and always-shown tools (agent-mode.ts). */
  readonly modeSettings?: ModeSettings;
  /** What its programs may call, which calls from code wait for approval, and a run's limits (code-settings.ts). */
  readonly code?: CodeSettings;
  /** Its `skillOptions`; undefined: no dynamic skills, `allowed-tools` checked. */
  readonly skillOptions?: SkillOptions;
}

/**
 * One condition of a grant's `when`: the token's claim `claim` holds one of `values` — a string
 * claim equal to one (for `scope` and `scp`, one of its space-separated words), an array claim
 * containing one. A dotted name (`realm_access.roles`) walks into objects when no claim has the
 * whole name.
 */
export interface ClaimTest {
  readonly claim: string;
  readonly values: readonly string[];
}

/**
 * A grant by claim (the `grants` section): rules for every agent whose OAuth/JWT token meets all of
 * `when`, added to its own entry's (or `default`'s); a deny from any of them wins (rules/decide.ts).
 */
export interface CompiledGrant {
  readonly id: string;
  readonly when: readonly ClaimTest[];
  readonly allow: CompiledSide;
  readonly deny: CompiledSide;
  /** The calls that wait for a person's approval (`approve`) for agents this grant applies to. */
  readonly approve: readonly ApprovalRule[];
}

export interface Rules {
  /** True only for OPEN_RULES (no rules file): every agent may use every server. */
  readonly open: boolean;
  /** Absolute path of the rules file; undefined for OPEN_RULES. */
  readonly file: string | undefined;
  readonly agents: ReadonlyMap<string, CompiledAgent>;
  /** The grants by claim, in file order (`grants`); empty when the file has none. */
  readonly grants: readonly CompiledGrant[];
  readonly defaults: { readonly denyOnMissingAgent: boolean };
  /** `sha256:<hex>` → the agent it identifies (a hash may belong to one agent only). */
  readonly tokens: ReadonlyMap<string, string>;
  /** The compiled `auth` section (JWT verification, auth-config.ts); undefined when the file has none. */
  readonly auth: AuthConfig | undefined;
  /** `sha256:<hex>` → the console admin it identifies (the `admins` section); empty: no console. */
  readonly admins: ReadonlyMap<string, string>;
  /** Quotas and rate limits (`limits`, rules/limits.ts); undefined when the file has none. */
  readonly limits: CompiledLimits | undefined;
  /** True when some agent or grant has an `approve` section: only then is a call looked up in them. */
  readonly approves: boolean;
  /** The curated views by name (`views`, views.ts); empty when the file has none. */
  readonly views: ReadonlyMap<string, CompiledView>;
  /** The built-in guards (`guards`, rules/guards-config.ts): the defaults without the section; undefined when it is `false`. */
  readonly guards: GuardBook | undefined;
  /** Which interceptor servers judge which calls (`interceptors`, rules/interceptors-config.ts); undefined without the section: all of them, every call. */
  readonly interceptors: readonly InterceptorBinding[] | undefined;
  readonly warnings: readonly ConfigIssue[];
  /** The validated JSON, deeply frozen, for status. It holds `auth` verbatim: redact before showing it. */
  readonly raw: unknown;
}

/** Whatever holds the rules in force (the gateway): one immutable snapshot, read where it is used, swapped whole on reload. */
export interface RulesInForce {
  readonly rules: Rules;
}

/** The agent whose rules apply to agents the file does not list, when it exists. */
export const DEFAULT_AGENT = 'default';

export const EMPTY_MATCHER = compileMatcher([]);
export const EMPTY_SIDE: CompiledSide = Object.freeze({
  servers: EMPTY_MATCHER,
  tools: frozenMap<string, Matcher>([]),
  skills: frozenMap<string, Matcher>([]),
});

/** What applies without a rules file: every agent may use every server (docs/architecture.md "Command line"). */
export const OPEN_RULES: Rules = Object.freeze({
  open: true,
  file: undefined,
  agents: frozenMap<string, CompiledAgent>([]),
  grants: Object.freeze([]),
  defaults: Object.freeze({ denyOnMissingAgent: false }),
  tokens: frozenMap<string, string>([]),
  auth: undefined,
  admins: frozenMap<string, string>([]),
  limits: undefined,
  approves: false,
  views: frozenMap<string, CompiledView>([]),
  guards: new GuardBook(DEFAULT_GUARD_SETTINGS, []),
  interceptors: undefined,
  warnings: Object.freeze([]),
  raw: undefined,
});
