// What every reader of a `.mcp.json` field gets: the file, the environment, the top-level defaults,
// and the lists every error and warning is collected in (with its JSON path).

import type { ConfigIssue, InheritEnv, SandboxPreset, ServerLimits } from './types.js';
import type { Env } from './expand.js';

/** One file's reading: where, with which environment and defaults, and what was found wrong. */
export interface Context {
  readonly file: string;
  /** The top-level "limits" over the built-in defaults: what a server without its own gets. */
  limits: ServerLimits;
  readonly env: Env;
  readonly errors: ConfigIssue[];
  readonly warnings: ConfigIssue[];
  /** The file's top-level `inheritEnv` (the default for stdio entries); undefined: `safe`. */
  inheritEnv: InheritEnv | undefined;
  /** The file's top-level `sandbox` (the default for stdio entries). */
  sandbox: SandboxDefault;
}

/** Expands `${VAR}` in one value of the entry, reporting an error at its path. */
export type Expand = (value: string, segments: readonly PropertyKey[]) => string;
/** An issue at a path inside the entry. */
export type Issue = (segments: readonly PropertyKey[], message: string) => ConfigIssue;

/** The file's top-level `sandbox`, as the entries read it (config/sandbox-fields.ts). */
export interface SandboxDefault {
  /** Entries without their own `sandbox` are sandboxed. */
  readonly on: boolean;
  /** An entry with `"sandbox": false` is an error. */
  readonly required: boolean;
  /** The settings (as written) an entry's own fields go over. */
  readonly settings: {
    readonly preset?: SandboxPreset;
    readonly read?: string[];
    readonly write?: string[];
    readonly network?: 'none' | 'full' | string[];
    readonly processes?: number;
    readonly memoryMb?: number;
  };
}
