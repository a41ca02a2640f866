// @ts-check
import { createConfigForNuxt } from '@nuxt/eslint-config/flat'
import { createNodeResolver } from 'eslint-plugin-import-x'

/** The optional features: each lives in its build step (src/build/<name>.ts) and its folder src/runtime/<name>/. */
const FEATURES = ['oauth', 'password', 'passkey', 'two-factor', 'impersonation', 'devtools', 'organizations', 'audit', 'native', 'magic-link', 'identities', 'i18n']
const featureFolders = `(${FEATURES.join('|')})`

/** Import specifiers that each layer refuses; a specific layer repeats the rules of the wider one it sits in. */
const serverOnly = { regex: '^(node:|h3$|unstorage|ioredis|@node-rs/)', message: 'Browser code must not import server-only packages.' }
const notBrowser = { regex: '(^|/)app(/|$)', message: 'Server code must not import browser code.' }
const noVue = { regex: '^(#app|#imports|vue|vue-router|@vue/)', message: 'Server code must not import Vue or the Nuxt app: it runs in Nitro.' }
const belowEdges = { regex: '(^|/)(routes|utils|plugins|middleware)(/|$)', message: 'Server libraries must not import routes, host utils, plugins or middleware (those are the edges that call them).' }
const noFeature = { regex: `(^|/)${featureFolders}/`, message: 'The core, the edge, the config and the store know no feature: a feature registers itself with them (src/runtime/<feature>/).' }
const noCore = { regex: '(^|/)core(/|$)', message: 'The edge, the config and the store sit below the core: they must not import it.' }
const noConfig = { regex: '(^|/)config(/|$)', message: 'The edge and the store sit below the config: they must not import it.' }
const noEdge = { regex: '(^|/)edge(/|$)', message: 'The store sits below the edge: it must not import it.' }
const notTesting = { regex: '(^|/)testing(/|$)', message: 'Runtime code must not import the test helpers (src/testing).' }
const noFeatureCode = { regex: `(^|/)${featureFolders}/(?![\\w-]+-types$)`, message: 'The core client knows no feature\'s code, only its types (src/runtime/<feature>/<feature>-types.ts): the feature\'s build step registers its client code (#build/svc-auth/client-features.mjs, a plugin, an auto-import).' }
const buildNotBrowser = { regex: '(^|/)app(/|$)', message: 'Build steps run in Node: they must not import browser code (src/runtime/app, src/runtime/<feature>/app).' }
const noTestRunner = { regex: '^(@nuxt/test-utils|playwright-core|vitest)', message: 'Only src/testing/e2e.ts may import the test runner\'s packages: `nuxt-svc-auth/testing` must load without them.' }
const lib = 'src/runtime/server/lib'

/** What browser code refuses: the core client (src/runtime/app) and the features' (src/runtime/<feature>/app). */
const browserForbids = [
  { regex: '(^|/)server(/|$)', message: 'Browser code must not import server code: move what both sides need to src/runtime/shared/.' },
  { regex: '(^|/)build(/|$)', message: 'Browser code must not import build-time code.' },
  serverOnly,
  { regex: '^jose$', message: 'The browser only reads token payloads (app/lib/token-payload.ts decodes them): no JWT library in the client bundle.' },
  notTesting,
]

/**
 * Layer rules: which folder may import which, for static imports (`no-restricted-imports`) and
 * `import()` alike (`no-restricted-syntax`, from the same patterns). ESLint applies the last
 * matching entry's options only, so an entry lists every rule that holds for its files. From the
 * bottom up: the store, the edge (requests, answers, cookies, rate limits), the config (options,
 * durations, deploy target), the core (tokens, sessions, revocation, claims, context), then the
 * features and the server's entry points (routes, utils, plugins, middleware).
 */
const layers = [
  {
    name: 'browser code imports nothing of the server or the build',
    files: ['src/runtime/app/**', 'src/runtime/*/app/**'],
    forbid: browserForbids,
  },
  {
    name: 'the core client knows no feature',
    files: ['src/runtime/app/**'],
    forbid: [...browserForbids, noFeatureCode],
  },
  {
    name: 'shared code imports only types and shared code',
    files: ['src/runtime/shared/**', `src/runtime/{${FEATURES.join(',')}}/*.ts`],
    forbid: [
      { regex: '(^|/)(server|app|build)(/|$)', message: 'Shared code is used by the browser and the server: it imports only shared code (src/runtime/shared, a feature\'s top-level files) and types.' },
      { regex: '^(#imports|#app|node:)', message: 'Shared code must not depend on Nuxt, Nitro or Node.' },
      notTesting,
    ],
  },
  {
    name: 'server code never imports browser code',
    files: ['src/runtime/server/**', 'src/runtime/*/server/**'],
    forbid: [notBrowser, noVue, notTesting],
  },
  {
    name: 'server libraries never import routes, host utils or plugins',
    files: [`${lib}/**`, 'src/runtime/*/server/*.ts'],
    // A feature's own entry points: its Nitro plugin and the host utils it adds.
    ignores: ['src/runtime/*/server/*-plugin.ts', 'src/runtime/*/server/event-handlers.ts'],
    forbid: [notBrowser, noVue, belowEdges, notTesting],
  },
  {
    name: 'the core knows no feature',
    files: [`${lib}/core/**`],
    forbid: [notBrowser, noVue, belowEdges, noFeature, notTesting],
  },
  {
    name: 'the config sits below the core',
    files: [`${lib}/config/**`],
    forbid: [notBrowser, noVue, belowEdges, noFeature, noCore, notTesting],
  },
  {
    name: 'the edge sits below the config',
    files: [`${lib}/edge/**`],
    forbid: [notBrowser, noVue, belowEdges, noFeature, noCore, noConfig, notTesting],
  },
  {
    name: 'the store is the bottom layer',
    files: [`${lib}/store/**`],
    forbid: [notBrowser, noVue, belowEdges, noFeature, noCore, noConfig, noEdge, notTesting],
  },
  {
    name: 'build steps run in Node: never browser code',
    files: ['src/build/**', 'src/module.ts'],
    forbid: [buildNotBrowser],
  },
  {
    name: 'test helpers use the server libraries, never browser code; only the e2e entry loads the test runner',
    files: ['src/testing/**'],
    forbid: [notBrowser, noTestRunner],
  },
  {
    name: 'the e2e test helpers',
    files: ['src/testing/e2e.ts'],
    forbid: [notBrowser],
  },
]

/**
 * Public type declarations import only other type declarations and the features' type files,
 * never server code (not even types of it): the built-in providers' names and option types are
 * declared in types/providers.ts, and the server's preset table is checked against them.
 */
/** @type {import('eslint').Linter.Config} */
const typesLayer = {
  name: 'svc-auth/layers/types import only types',
  files: ['src/runtime/types/**'],
  rules: {
    'no-restricted-imports': 'off',
    '@typescript-eslint/no-restricted-imports': ['error', {
      patterns: [
        { regex: `^\\.\\./(?!${featureFolders}/[\\w-]+-types$)`, message: 'Type declarations import only other files of src/runtime/types, the features\' type files (and packages): never server code.' },
      ],
    }],
  },
}

/**
 * An esquery selector of the `import()` calls whose specifier matches `regex`.
 * @param {string} regex
 */
const dynamicImportOf = regex => `ImportExpression[source.value=/${regex.replaceAll('/', '\\/')}/]`

export default createConfigForNuxt({
  features: {
    tooling: true,
    stylistic: true,
  },
  dirs: {
    src: ['./playground', './test/fixtures/basic', './test/fixtures/client', './test/fixtures/oauth', './test/fixtures/password', './test/fixtures/openapi', './test/fixtures/passkey', './test/fixtures/org-access', './bench/fixtures/with-module', './bench/fixtures/without-module'],
  },
})
  .append(
    ...layers.map(layer => ({
      name: `svc-auth/layers/${layer.name}`,
      files: layer.files,
      ...(layer.ignores ? { ignores: layer.ignores } : {}),
      rules: {
        'no-restricted-imports': /** @type {['error', { patterns: Array<{ regex: string, message: string }> }]} */ (['error', {
          patterns: layer.forbid.map(({ regex, message }) => ({ regex, message })),
        }]),
        // The same patterns for `import()`: code loaded on demand is imported all the same.
        'no-restricted-syntax': /** @type {['error', ...Array<{ selector: string, message: string }>]} */ (['error',
          ...layer.forbid.map(({ regex, message }) => ({ selector: dynamicImportOf(regex), message: `import(): ${message}` })),
        ]),
      },
    })),
    typesLayer,
    {
      // No import cycle: a module below never imports one above it, even through others. The rule
      // reads a dependency only when its extension is listed in `import-x/extensions` (default:
      // JavaScript only, so without these settings it never saw a .ts file and never fired) and
      // parses it with the parser given for its extension. It skips type-only imports;
      // test/unit/import-cycles.test.ts checks those too.
      name: 'svc-auth/no-cycle',
      files: ['src/**'],
      settings: {
        'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.mts', '.vue', '.js', '.mjs'] })],
        'import-x/extensions': ['.ts', '.mts', '.js', '.mjs'],
        'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.mts'] },
      },
      rules: {
        'import/no-cycle': 'error',
      },
    },
    {
      // Templates stay compact: short elements and their attributes on one line.
      name: 'svc-auth/templates',
      files: ['**/*.vue'],
      rules: {
        'vue/max-attributes-per-line': 'off',
        'vue/singleline-html-element-content-newline': 'off',
      },
    },
    {
      // A page's file name is its route (`/auth/callback`), not a component name.
      name: 'svc-auth/pages',
      files: ['src/runtime/app/pages/**', 'src/runtime/*/app/*.vue'],
      rules: {
        'vue/multi-word-component-names': 'off',
      },
    },
    {
      name: 'svc-auth/types-only',
      files: ['src/runtime/types/**'],
      rules: {
        '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', disallowTypeAnnotations: false }],
      },
    },
    {
      name: 'svc-auth/typescript',
      files: ['src/**'],
      rules: {
        '@typescript-eslint/no-explicit-any': 'error',
        // Host handlers and hooks may return a value or nothing: `T | void` says exactly that.
        '@typescript-eslint/no-invalid-void-type': 'off',
      },
    },
  )
