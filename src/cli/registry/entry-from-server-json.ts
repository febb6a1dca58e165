// From a server.json to one `.mcp.json` entry: the ways the server can be run (its packages — npm,
// PyPI, OCI — and its remote endpoints), which of them this machine can run and why, the questions
// the chosen one asks (environment variables, headers, arguments and their template variables), and
// the entry built from the answers. Secrets never enter the entry: it holds `${KEY}` and the value
// goes to the env file. Every package is pinned to the exact version the registry names.

import type { Argument, Input, KeyValueInput, Package, Remote, ServerJson } from './server-json.js';

export const KINDS = ['npm', 'pypi', 'oci', 'remote'] as const;
export type Kind = (typeof KINDS)[number];

interface LaunchOption {
  readonly kind: Kind | 'unsupported';
  readonly label: string;
  readonly package?: Package;
  readonly remote?: Remote;
  /** The program the entry starts (npx, uvx, pipx, python3, docker, podman); none for a remote. */
  readonly runtime?: string;
  /** Whether this machine can use it (its runtime is on PATH; OCI only when allowed). */
  readonly usable: boolean;
  /** Why it is, or is not, usable: shown to the user. */
  readonly why: string;
}

interface Machine {
  /** Whether `program` is an executable on PATH. */
  readonly onPath: (program: string) => boolean;
  /** Containers only when the user allows them (--allow-oci). */
  readonly allowOci: boolean;
}

/** Every way `server` can be run, packages first in the publisher's order, then remotes. */
export function launchOptions(server: ServerJson, machine: Machine): LaunchOption[] {
  const out: LaunchOption[] = [];
  for (const pkg of server.packages ?? []) out.push(packageOption(pkg, machine));
  for (const remote of server.remotes ?? [])
    out.push({
      kind: 'remote',
      label: `remote ${remote.type} ${remote.url}`,
      remote,
      usable: true,
      why: 'a remote endpoint: nothing runs on this machine',
    });
  return out;
}

function packageOption(pkg: Package, machine: Machine): LaunchOption {
  const label = `${pkg.registryType} ${pkg.identifier}${pkg.version === undefined ? '' : `@${pkg.version}`}`;
  const transport = pkg.transport?.type ?? 'stdio';
  if (transport !== 'stdio')
    return {
      kind: 'unsupported',
      label,
      package: pkg,
      usable: false,
      why: `the package serves ${transport} on a port of its own; mcpgate runs stdio packages`,
    };
  const first = (programs: readonly string[]): string | undefined => programs.find((p) => machine.onPath(p));
  switch (pkg.registryType) {
    case 'npm': {
      if (pkg.version === undefined) return { kind: 'npm', label, package: pkg, usable: false, why: 'no exact version to pin' };
      const ok = machine.onPath('npx');
      return {
        kind: 'npm',
        label,
        package: pkg,
        runtime: 'npx',
        usable: ok,
        why: ok ? 'npx is on PATH' : 'npx is not on PATH (install Node.js)',
      };
    }
    case 'pypi': {
      if (pkg.version === undefined) return { kind: 'pypi', label, package: pkg, usable: false, why: 'no exact version to pin' };
      const hint = pkg.runtimeHint;
      const wanted =
        hint === 'uvx' || hint === 'pipx' ? [hint] : hint === 'python' || hint === 'python3' ? ['python3', 'python'] : ['uvx', 'pipx'];
      const runtime = first(wanted);
      return {
        kind: 'pypi',
        label,
        package: pkg,
        runtime: runtime ?? wanted[0]!,
        usable: runtime !== undefined,
        why:
          runtime !== undefined
            ? `${runtime} is on PATH${hint === undefined ? '' : ` (the server asks for ${hint})`}`
            : `${wanted.join(' or ')} is not on PATH${hint === undefined ? '' : ` (the server asks for ${hint})`}`,
      };
    }
    case 'oci': {
      const runtime = first(['docker', 'podman']);
      if (!machine.allowOci)
        return {
          kind: 'oci',
          label,
          package: pkg,
          runtime: runtime ?? 'docker',
          usable: false,
          why: 'a container image: only with --allow-oci',
        };
      return {
        kind: 'oci',
        label,
        package: pkg,
        runtime: runtime ?? 'docker',
        usable: runtime !== undefined,
        why: runtime !== undefined ? `${runtime} is on PATH and --allow-oci was given` : 'neither docker nor podman is on PATH',
      };
    }
    default:
      return { kind: 'unsupported', label, package: pkg, usable: false, why: `mcpgate does not run ${pkg.registryType} packages` };
  }
}

/** The option to use: the one of `kind` if asked for, else the first usable one. */
export function chooseOption(options: readonly LaunchOption[], kind: Kind | undefined): LaunchOption | undefined {
  if (kind !== undefined) return options.find((o) => o.kind === kind);
  return options.find((o) => o.usable);
}

/** One value the entry needs from the user (or has a default for). */
export interface Question {
  /** The name it is answered by (`--env KEY=VALUE`, the answers file); also its `${KEY}` when secret. */
  readonly key: string;
  /** What it is, for the prompt and the plan: `environment variable API_KEY`, `header X-Api-Key`. */
  readonly what: string;
  readonly description?: string;
  readonly secret: boolean;
  readonly required: boolean;
  readonly default?: string;
  readonly choices?: readonly string[];
}

/** A name usable as `${KEY}` and as an env file's NAME: letters, digits and _. */
function keyOf(raw: string): string {
  const key = raw
    .replace(/^-+/, '')
    .replace(/[^A-Za-z0-9_]/g, '_')
    .toUpperCase();
  return /^[A-Za-z_]/.test(key) ? key : `_${key}`;
}

/** Every value the option takes from the user, in the order they are asked. */
export function questionsFor(option: LaunchOption): Question[] {
  const out = new Map<string, Question>();
  const add = (q: Question): void => void (out.has(q.key) ? undefined : out.set(q.key, q));
  const fromInput = (key: string, what: string, input: Input): Question => ({
    key,
    what,
    secret: input.isSecret === true,
    required: input.isRequired === true,
    ...(input.description !== undefined && { description: input.description }),
    ...(input.default !== undefined && { default: input.default }),
    ...(input.choices !== undefined && input.choices.length > 0 && { choices: input.choices }),
  });
  const templated = (input: Input & { variables?: Record<string, Input> }): void => {
    for (const [name, variable] of Object.entries(input.variables ?? {})) add(fromInput(keyOf(name), `value {${name}}`, variable));
  };
  const argument = (arg: Argument): void => {
    if (arg.value !== undefined) return templated(arg);
    const key = keyOf(arg.type === 'named' ? arg.name : (arg.valueHint ?? 'value'));
    add(fromInput(key, arg.type === 'named' ? `argument ${arg.name}` : `argument <${arg.valueHint ?? 'value'}>`, arg));
  };
  const keyValue = (kv: KeyValueInput, what: string, key: string): void => {
    if (kv.value !== undefined) return templated(kv);
    add(fromInput(key, what, kv));
  };
  const pkg = option.package;
  if (pkg !== undefined) {
    for (const arg of pkg.runtimeArguments ?? []) argument(arg);
    for (const arg of pkg.packageArguments ?? []) argument(arg);
    for (const env of pkg.environmentVariables ?? []) keyValue(env, `environment variable ${env.name}`, env.name);
  }
  const remote = option.remote;
  if (remote !== undefined) {
    for (const [name, variable] of Object.entries(remote.variables ?? {})) add(fromInput(keyOf(name), `URL value {${name}}`, variable));
    for (const header of remote.headers ?? []) keyValue(header, `header ${header.name}`, keyOf(header.name));
  }
  return [...out.values()];
}

interface BuiltEntry {
  readonly entry: Record<string, unknown>;
  /** The keys the entry refers to as `${KEY}`: their values belong in the env file (or the environment). */
  readonly references: readonly string[];
}

/**
 * The `.mcp.json` entry for `option` with the answered values: `answer(key)` is the user's value (for
 * a secret: any value the env file or environment already has) or undefined — then the default
 * where the input is required, else the input is left out.
 */
export function buildEntry(option: LaunchOption, questions: readonly Question[], answer: (key: string) => string | undefined): BuiltEntry {
  const references = new Set<string>();
  const byKey = new Map(questions.map((q) => [q.key, q]));
  /** The text for `key`: `${KEY}` when secret, else the answer or the required input's default. */
  // A template variable ({name} inside a value or the URL) takes its default even when optional: the
  // text around it needs a value.
  const valueOf = (key: string, inTemplate = false): string | undefined => {
    const q = byKey.get(key);
    if (q?.secret === true) {
      if (answer(key) === undefined && !q.required) return undefined;
      references.add(key);
      return `\${${key}}`;
    }
    return answer(key) ?? (q?.required === true || inTemplate ? q?.default : undefined);
  };
  const fill = (input: Input & { variables?: Record<string, Input> }, text: string): string =>
    text.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) =>
      input.variables !== undefined && Object.hasOwn(input.variables, name) ? (valueOf(keyOf(name), true) ?? whole) : whole,
    );
  const args = (list: readonly Argument[] | undefined): string[] => {
    const out: string[] = [];
    for (const arg of list ?? []) {
      const value =
        arg.value !== undefined ? fill(arg, arg.value) : valueOf(keyOf(arg.type === 'named' ? arg.name : (arg.valueHint ?? 'value')));
      if (arg.type === 'named') {
        if (value !== undefined) out.push(arg.name, value);
      } else if (value !== undefined) out.push(value);
    }
    return out;
  };

  const remote = option.remote;
  if (remote !== undefined) {
    const url = remote.url.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) =>
      remote.variables !== undefined && Object.hasOwn(remote.variables, name) ? (valueOf(keyOf(name), true) ?? whole) : whole,
    );
    const headers: Record<string, string> = {};
    for (const header of remote.headers ?? []) {
      const value = header.value !== undefined ? fill(header, header.value) : valueOf(keyOf(header.name));
      if (value !== undefined) headers[header.name] = value;
    }
    return {
      entry: { type: remote.type === 'sse' ? 'sse' : 'http', url, ...(Object.keys(headers).length > 0 && { headers }) },
      references: [...references],
    };
  }

  const pkg = option.package!;
  const env: Record<string, string> = {};
  for (const variable of pkg.environmentVariables ?? []) {
    const value = variable.value !== undefined ? fill(variable, variable.value) : valueOf(variable.name);
    if (value !== undefined) env[variable.name] = value;
  }
  const runtimeArgs = args(pkg.runtimeArguments);
  const packageArgs = args(pkg.packageArguments);
  let command: string;
  let argv: string[];
  switch (option.kind) {
    case 'npm':
      command = 'npx';
      argv = [...runtimeArgs, '-y', `${pkg.identifier}@${pkg.version!}`, ...packageArgs];
      break;
    case 'pypi':
      command = option.runtime ?? 'uvx';
      argv =
        command === 'pipx'
          ? ['run', ...runtimeArgs, `${pkg.identifier}==${pkg.version!}`, ...packageArgs]
          : command === 'uvx'
            ? [...runtimeArgs, `${pkg.identifier}==${pkg.version!}`, ...packageArgs]
            : [...runtimeArgs, '-m', pkg.identifier.replace(/-/g, '_'), ...packageArgs];
      break;
    case 'oci': {
      command = option.runtime ?? 'docker';
      const image =
        pkg.version !== undefined && !/:[^/]+$|@sha256:/.test(pkg.identifier) ? `${pkg.identifier}:${pkg.version}` : pkg.identifier;
      // The container sees only the variables named here, with the values the entry's env gives them.
      argv = ['run', '-i', '--rm', ...Object.keys(env).flatMap((name) => ['-e', name]), ...runtimeArgs, image, ...packageArgs];
      break;
    }
    default:
      throw new Error(`cannot build an entry for ${option.label}`);
  }
  return { entry: { command, args: argv, ...(Object.keys(env).length > 0 && { env }) }, references: [...references] };
}

/** The exact version an option pins: the package's, or for a remote the server's own. */
export function pinnedVersion(option: LaunchOption, server: ServerJson): string {
  return option.package?.version ?? server.version;
}
