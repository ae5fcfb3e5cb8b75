// Lint = correctness + architecture. The boundary rules below make the one-way dependency direction
// (apps → engine → platform → adapters → domain → contracts) executable; test/lint/boundaries.spec.ts proves
// they still fire. Type-aware rules are limited to the two that catch lost promises.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import importPlugin from 'eslint-plugin-import';
import tseslint from 'typescript-eslint';

const root = import.meta.dirname;

const APPS = ['gateway', 'orchestrator', 'tool-executor', 'memory', 'approvals', 'cli'];

/** Node's modules that do I/O or draw randomness, bare and with the `node:` scheme. */
const NODE_IO = [
  'fs',
  'fs/promises',
  'net',
  'tls',
  'dgram',
  'dns',
  'dns/promises',
  'http',
  'https',
  'http2',
  'child_process',
  'cluster',
  'worker_threads',
  'os',
  'crypto',
].flatMap((name) => [name, `node:${name}`]);

/** Everywhere: one public entry per library, no `@ratchet/contracts/src/...` (the one named second entry aside). */
const deepImport = {
  regex: '^@ratchet/(?!adapters/operator$)[^/]+/.+',
  message:
    'Import a library only through its public entry (`@ratchet/<lib>`, or `@ratchet/adapters/operator` for operator queries); export what you need from its src/index.ts.',
};

/** The operator's queries are the CLI's (and tests'): no service or library reaches for them. */
const operatorEntry = {
  regex: '^@ratchet/adapters/operator$',
  message: 'Operator queries (`@ratchet/adapters/operator`) are for the ratchet CLI only.',
};

/** In libs: never an app, by package name or by path (nor the operator's queries, which are the CLI's). */
const libsToApps = [
  operatorEntry,
  {
    regex: `^@ratchet/(${APPS.join('|')})$`,
    message: 'Libraries never depend on apps: move the shared code into a library.',
  },
  {
    regex: '(^|/)apps/',
    message: 'Libraries never depend on apps: move the shared code into a library.',
  },
];

/** Below the engine: the libraries it stands on never reach up into it. */
const libsToEngine = [
  {
    regex: '^@ratchet/engine$',
    message: 'The engine sits above the other libraries: only apps (and tests) import it.',
  },
  {
    regex: '(^|/)libs/engine/',
    message: 'The engine sits above the other libraries: only apps (and tests) import it.',
  },
];

/** The operator's commands (libs/operator) are the CLI's: no service and no other library imports them. */
const operatorLib = [
  {
    regex: '^@ratchet/operator$',
    message: "libs/operator holds the ratchet CLI's commands: only apps/cli (and tests) import it.",
  },
  {
    regex: '(^|/)libs/operator/',
    message: "libs/operator holds the ratchet CLI's commands: only apps/cli (and tests) import it.",
  },
];

/** The timed work (libs/jobs) sits above platform and tools, beside the engine: only apps (and tests) import it. */
const jobsLib = [
  {
    regex: '^@ratchet/jobs$',
    message:
      'libs/jobs (schedule ticker, webhook sender, housekeeping) sits above the other libraries: only apps import it.',
  },
  {
    regex: '(^|/)libs/jobs/',
    message:
      'libs/jobs (schedule ticker, webhook sender, housekeeping) sits above the other libraries: only apps import it.',
  },
];

/** The HTTP edge (libs/http-edge: problem details, parse-at-the-edge, OpenAPI decorators) is the gateway's. */
const httpEdgeLib = [
  {
    regex: '^@ratchet/http-edge$',
    message: 'libs/http-edge is the HTTP edge (problem details, request parsing): only the gateway imports it.',
  },
];

/** A library imported by neither name nor path (`@ratchet/<lib>`, `libs/<lib>/`), saying why. */
function libImports(lib, message) {
  return [
    { regex: `^@ratchet/${lib}$`, message },
    { regex: `(^|/)libs/${lib}/`, message },
  ];
}

/** The agent catalog and approval rules (libs/agents): above the engine, for the orchestrator and libs/requests. */
const agentsLib = libImports(
  'agents',
  'libs/agents (agent catalog, approval rules) sits above the engine: only apps and libs/requests import it.',
);

/** The services' request handling (libs/requests: AgentsApi, ThreadsApi, MemoryApi): only apps import it. */
const requestsLib = libImports(
  'requests',
  "libs/requests (the services' request APIs) sits above the other libraries: only apps import it.",
);

/**
 * The libraries above platform (engine, jobs, the HTTP edge, the operator's commands, agents, requests):
 * only apps import them.
 */
const upperLibs = [...libsToEngine, ...operatorLib, ...jobsLib, ...httpEdgeLib, ...agentsLib, ...requestsLib];

const jobsMessage =
  'libs/jobs is framework-free: the service wraps each job in its own Nest lifecycle and hands it its clock, database and relay.';

const agentsMessage =
  'libs/agents is framework-free: the orchestrator builds the catalog and the enrichers and wires them into Nest and the engine.';

const requestsMessage =
  "libs/requests is framework-free: a request's bytes in, a reply out; the service subscribes, finds the tenant in the subject and responds.";

const operatorMessage =
  'libs/operator is what the ratchet commands do, without their arguments: commander and the options stay in apps/cli; no framework.';

const engineMessage =
  'libs/engine is framework-free and stands on contracts, domain and platform only: the service passes its own parts (adapters, tools) in ThreadEngineDeps.';

/** no-restricted-imports settings replace each other per file, so each folder states its full list. */
function restrict({ paths = [], patterns = [] }) {
  return { 'no-restricted-imports': ['error', { paths, patterns: [deepImport, ...patterns] }] };
}

const domainMessage =
  'libs/domain is pure: no framework, database, bus, OTel SDK, I/O, clock or randomness (ids and time come in on the command).';

const boundaries = [
  {
    name: 'ratchet/boundaries/everywhere',
    files: ['**/*.{ts,mts,cts,js,mjs,cjs}'],
    rules: restrict({}),
  },
  {
    name: 'ratchet/boundaries/apps',
    files: ['apps/*/**/*.ts'],
    rules: restrict({
      patterns: APPS.map((app) => ({
        regex: `^@ratchet/${app}$`,
        message: 'Apps do not import each other: shared code belongs in a library.',
      })),
    }),
  },
  {
    name: 'ratchet/boundaries/services',
    files: ['apps/*/**/*.ts'],
    ignores: ['apps/cli/**'],
    rules: restrict({
      patterns: [
        ...APPS.map((app) => ({
          regex: `^@ratchet/${app}$`,
          message: 'Apps do not import each other: shared code belongs in a library.',
        })),
        operatorEntry,
        ...operatorLib,
      ],
    }),
  },
  {
    name: 'ratchet/boundaries/libs',
    files: ['libs/*/**/*.ts'],
    ignores: ['libs/engine/**', 'libs/operator/**', 'libs/jobs/**', 'libs/agents/**', 'libs/requests/**'],
    rules: restrict({ patterns: [...libsToApps, ...upperLibs] }),
  },
  {
    name: 'ratchet/boundaries/jobs',
    files: ['libs/jobs/**/*.ts'],
    rules: restrict({
      patterns: [
        ...libsToApps,
        ...libsToEngine,
        ...operatorLib,
        ...agentsLib,
        ...requestsLib,
        { regex: '^(@nestjs|@mikro-orm)/', message: jobsMessage },
      ],
    }),
  },
  // libs/agents and libs/requests: framework-free, above the engine; requests may import agents, not back.
  ...[
    ['agents', agentsMessage, requestsLib],
    ['requests', requestsMessage, []],
  ].map(([lib, message, above]) => ({
    name: `ratchet/boundaries/${lib}`,
    files: [`libs/${lib}/**/*.ts`],
    rules: restrict({
      patterns: [
        ...libsToApps,
        ...operatorLib,
        ...jobsLib,
        ...httpEdgeLib,
        ...above,
        { regex: '^(@nestjs|@mikro-orm)/', message },
      ],
    }),
  })),
  {
    name: 'ratchet/boundaries/operator',
    files: ['libs/operator/**/*.ts'],
    rules: restrict({
      paths: [{ name: 'commander', message: operatorMessage }],
      // The operator's queries (`@ratchet/adapters/operator`) are what it is for.
      patterns: [
        ...libsToApps.filter((p) => p !== operatorEntry),
        { regex: '^(@nestjs|@mikro-orm)/', message: operatorMessage },
      ],
    }),
  },
  {
    name: 'ratchet/boundaries/engine',
    files: ['libs/engine/**/*.ts'],
    // Its specs drive it over a real store (the in-memory adapter), as a service would.
    ignores: ['libs/engine/**/*.spec.ts'],
    rules: restrict({
      paths: ['nats', 'pg', 'undici', '@ratchet/adapters', '@ratchet/tools', '@ratchet/client'].map((name) => ({
        name,
        message: engineMessage,
      })),
      patterns: [
        ...libsToApps,
        ...operatorLib,
        ...jobsLib,
        ...httpEdgeLib,
        ...agentsLib,
        ...requestsLib,
        { regex: '^(@nestjs|@mikro-orm)/', message: engineMessage },
      ],
    }),
  },
  {
    name: 'ratchet/boundaries/contracts',
    files: ['libs/contracts/**/*.ts'],
    rules: restrict({
      patterns: [
        ...libsToApps,
        {
          // Anything that is not zod, node:crypto (the documented id derivation) or a relative path.
          regex: '^(?!(zod|node:crypto|\\.{1,2})(/|$))',
          message: 'libs/contracts is the wire language: it may import only zod (and node:crypto for derived ids).',
        },
      ],
    }),
  },
  {
    name: 'ratchet/boundaries/domain',
    files: ['libs/domain/**/*.ts'],
    rules: restrict({
      paths: [...NODE_IO, 'nats', 'pg', 'undici', '@ratchet/adapters', '@ratchet/platform'].map((name) => ({
        name,
        message: domainMessage,
      })),
      patterns: [
        ...libsToApps,
        ...upperLibs,
        {
          regex: '^(@nestjs|@mikro-orm)/',
          message: domainMessage,
        },
        {
          regex: '^@opentelemetry/(sdk-|exporter-)',
          message: domainMessage,
        },
      ],
    }),
  },
  {
    name: 'ratchet/boundaries/adapters',
    files: ['libs/adapters/**/*.ts'],
    rules: restrict({
      paths: [{ name: '@ratchet/platform', message: 'Adapters are framework-free and sit below platform.' }],
      patterns: [
        ...libsToApps,
        ...upperLibs,
        { regex: '^@nestjs/', message: 'Adapters are framework-free: Nest wiring belongs in libs/platform.' },
      ],
    }),
  },
];

export default defineConfig(
  globalIgnores(['**/dist/', '**/node_modules/', '**/coverage/', '.nx/', '**/*.d.ts', 'docs/openapi.json']),
  {
    name: 'ratchet/base',
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    name: 'ratchet/js',
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: {
      ecmaVersion: 2023,
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
      },
    },
  },
  {
    name: 'ratchet/commonjs',
    files: ['**/*.{js,cjs}'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', __filename: 'readonly' },
    },
  },
  {
    name: 'ratchet/ts',
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Type-aware rules: an unawaited promise loses an ack or a commit silently; a switch over a union
    // that misses a member (a new event type, a new ledger state) decides nothing for it silently.
    name: 'ratchet/ts-typed',
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: root },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    // Where rules are decided (deciders, evolve, the handlers around them) a `default` does not make a
    // switch exhaustive: every member of the union is named, so a new one must be decided.
    name: 'ratchet/exhaustive-decisions',
    files: [
      'libs/domain/src/**/*.ts',
      'libs/engine/src/**/*.ts',
      'apps/orchestrator/src/threads/**/*.ts',
      'apps/tool-executor/src/effects/**/*.ts',
    ],
    ignores: ['**/*.spec.ts'],
    rules: {
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false }],
    },
  },
  {
    name: 'ratchet/imports',
    files: ['**/*.{ts,js,mjs,cjs}'],
    plugins: { import: importPlugin },
    settings: {
      'import/extensions': ['.ts', '.js', '.mjs', '.cjs'],
      'import/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import/resolver': { node: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] } },
      // Cross-library cycles are already impossible by the boundaries; no-cycle checks inside a package.
      'import/external-module-folders': ['node_modules'],
      // Never parse dependencies: cycles that matter are inside our own packages.
      'import/ignore': ['node_modules'],
    },
    rules: {
      'import/no-cycle': ['error', { ignoreExternal: true }],
      'import/no-relative-packages': 'error',
    },
  },
  ...boundaries,
);
