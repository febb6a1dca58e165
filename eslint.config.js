// Lint configuration: typescript-eslint's type-aware recommended rules plus a few that guard the
// habits in STYLE.md (no floating promises, no `any` on a boundary, no console in library code, no
// tracker number in a comment of src/).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The rooms of src/ and the arrows allowed between them (docs/architecture.md explains each). A room
// may import from itself, from the leaves errors.ts and version.ts, and from the rooms listed here;
// anything else is a lint error. Cycles inside a room are caught by test/unit/codebase/layering.test.ts.
const ROOMS = {
  wire: [],
  observability: [],
  search: ['wire'],
  code: ['wire'],
  config: ['observability'],
  rules: ['config', 'wire'],
  auth: ['rules'],
  pins: ['wire', 'observability'],
  servers: ['config', 'wire', 'observability'],
  oauth: ['config', 'observability'],
  catalog: ['servers', 'wire', 'observability'],
  policy: ['rules', 'servers', 'wire', 'observability'],
  gateway: ['policy', 'catalog', 'pins', 'rules', 'search', 'code', 'servers', 'config', 'wire', 'observability'],
  cluster: ['policy', 'console', 'wire', 'observability'],
  front: ['gateway', 'policy', 'auth', 'cluster', 'wire', 'observability'],
  console: ['gateway', 'policy', 'auth', 'pins', 'rules', 'wire', 'observability'],
  'reload.ts': ['gateway', 'rules', 'config', 'observability'],
  'mcpgate.ts': ['reload.ts', 'front', 'console', 'cluster', 'gateway', 'policy', 'oauth', 'rules', 'config', 'observability'],
  cli: ['mcpgate.ts', 'reload.ts', 'front', 'cluster', 'auth', 'oauth', 'pins', 'rules', 'config', 'wire', 'observability'],
};

// Rooms that read no files: they get text and objects from their callers (docs/architecture.md).
const PURE = ['rules', 'wire', 'catalog', 'search'];
const FILE_SYSTEM = ['node:fs', 'node:fs/promises', 'fs', 'fs/promises'];

/**
 * One block per room: imports of a room it may not use are errors, named with the rule; in a PURE
 * room, so are the file-system modules. Both go in the room's one `no-restricted-imports` entry: in
 * a flat config a later block that sets the same rule replaces its options, it does not merge them.
 */
function layering() {
  const all = Object.keys(ROOMS);
  return Object.entries(ROOMS).map(([room, allowed]) => {
    const file = room.endsWith('.ts');
    const forbidden = all.filter((other) => other !== room && !allowed.includes(other));
    // A room's files may sit in sub-folders (servers/transports/http/, front/http/): the way up to
    // src/ is one to three `../` deep, and each depth gets the same forbidden patterns.
    const ups = file ? ['./'] : ['../', '../../', '../../../'];
    return {
      files: [file ? `src/${room}` : `src/${room}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: PURE.includes(room)
              ? FILE_SYSTEM.map((name) => ({
                  name,
                  message: `src/${room} reads no files: its callers read them and pass the text (docs/architecture.md, PURE in eslint.config.js).`,
                }))
              : [],
            patterns: forbidden.map((other) => ({
              group: ups.map((up) => (other.endsWith('.ts') ? `${up}${other.replace(/\.ts$/, '.js')}` : `${up}${other}/*`)),
              message: `src/${room} may not import from src/${other} (allowed: ${allowed.join(', ') || 'none'}; see docs/architecture.md and ROOMS in eslint.config.js).`,
            })),
          },
        ],
      },
    };
  });
}

// Comments in src/ say why in the code's own terms; a tracker number ("issue 12", "seed 004",
// "audit #5", "hardening §4") points at something the repository does not explain.
export const TRACKER_REFERENCE = /(issue|Issue)s? #?[0-9]+|seed 00[0-9]|audit #[0-9]+|seeds? [0-9]+|hardening (issue )?§[0-9]+/;

/** A local plugin with one rule: no comment in src/ may cite a tracker number. */
const mcpgate = {
  rules: {
    'no-tracker-references': {
      meta: {
        type: 'suggestion',
        docs: { description: "comments say why in the code's own terms, not by a tracker number" },
        schema: [],
      },
      create(context) {
        return {
          Program() {
            for (const comment of context.sourceCode.getAllComments()) {
              const found = TRACKER_REFERENCE.exec(comment.value);
              if (found === null) continue;
              context.report({
                loc: comment.loc,
                message: `comment cites "${found[0]}": say the reason itself (the repository does not explain the tracker)`,
              });
            }
          },
        };
      },
    },
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js', 'scripts/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  ...layering(),
  { files: ['src/**/*.ts'], plugins: { mcpgate }, rules: { 'mcpgate/no-tracker-references': 'error' } },
  // A row of positional arguments is where booleans get swapped: past four, the gateway and the
  // policy rooms take values that name each fact (AgentIdentity, a call's parts).
  { files: ['src/gateway/**/*.ts', 'src/policy/**/*.ts'], rules: { 'max-params': ['error', 4] } },
  { files: ['eslint.config.js'], extends: [tseslint.configs.disableTypeChecked] },
);
