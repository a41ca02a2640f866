// @ts-check
import { createConfigForNuxt } from '@nuxt/eslint-config/flat'

/** Import specifiers that each layer refuses; a specific layer repeats the rules of the wider one it sits in. */
const serverOnly = { regex: '^(node:|h3$|unstorage|ioredis|@node-rs/)', message: 'Browser code must not import server-only packages.' }
const notBrowser = { regex: '(^|/)app(/|$)', message: 'Server code must not import browser code.' }
const belowEdges = { regex: '(^|/)(routes|utils|plugins|middleware)(/|$)', message: 'Server libraries must not import routes, host utils, plugins or middleware (those are the edges that call them).' }
const belowProviders = { regex: '(^|/)(oauth|password|passkey)(/|$)', message: 'Records and stores must not import providers.' }
const notTesting = { regex: '(^|/)testing(/|$)', message: 'Runtime code must not import the test helpers (src/testing).' }
const noTestRunner = { regex: '^(@nuxt/test-utils|playwright-core|vitest)', message: 'Only src/testing/e2e.ts may import the test runner\'s packages: `nuxt-svc-auth/testing` must load without them.' }

/**
 * Layer rules: which folder may import which. ESLint applies the last matching entry's options
 * only, so an entry lists every rule that holds for its files.
 */
const layers = [
  {
    name: 'browser code imports nothing of the server or the build',
    files: ['src/runtime/app/**', 'src/runtime/devtools/**'],
    forbid: [
      { regex: '(^|/)server(/|$)', message: 'Browser code must not import server code: move what both sides need to src/runtime/shared/.' },
      { regex: '(^|/)build(/|$)', message: 'Browser code must not import build-time code.' },
      serverOnly,
      { regex: '^jose$', message: 'The browser only reads token payloads (app/lib/claims.ts decodes them): no JWT library in the client bundle.' },
      notTesting,
    ],
  },
  {
    name: 'shared code imports only types and shared code',
    files: ['src/runtime/shared/**'],
    forbid: [
      { regex: '(^|/)(server|app|build)(/|$)', message: 'Shared code is used by the browser and the server: it imports only src/runtime/shared and src/runtime/types.' },
      { regex: '^(#imports|#app|node:)', message: 'Shared code must not depend on Nuxt, Nitro or Node.' },
      notTesting,
    ],
  },
  {
    name: 'server code never imports browser code',
    files: ['src/runtime/server/**'],
    forbid: [notBrowser, notTesting],
  },
  {
    name: 'server libraries never import routes, host utils or plugins',
    files: ['src/runtime/server/lib/**'],
    forbid: [notBrowser, belowEdges, notTesting],
  },
  {
    name: 'records and stores are the bottom layer',
    files: ['src/runtime/server/lib/store/**', 'src/runtime/server/lib/records/**'],
    forbid: [notBrowser, belowEdges, belowProviders, notTesting],
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
 * Type declarations import only other type declarations, with one exception: the built-in
 * providers' names and option types derive from the preset table (type-only imports of it).
 */
/** @type {import('eslint').Linter.Config} */
const typesLayer = {
  name: 'svc-auth/layers/types import only types',
  files: ['src/runtime/types/**'],
  rules: {
    'no-restricted-imports': 'off',
    '@typescript-eslint/no-restricted-imports': ['error', {
      patterns: [
        { regex: '^\\.\\./(?!server/lib/oauth/presets?$)', message: 'Type declarations import only other files of src/runtime/types (and packages).' },
        { regex: '^\\.\\./server/lib/oauth/presets?$', allowTypeImports: true, message: 'Only types may be imported from the preset table.' },
      ],
    }],
  },
}

export default createConfigForNuxt({
  features: {
    tooling: true,
    stylistic: true,
  },
  dirs: {
    src: ['./playground', './test/fixtures/basic', './test/fixtures/client', './test/fixtures/oauth', './test/fixtures/password', './test/fixtures/openapi', './test/fixtures/passkey', './bench/fixtures/with-module', './bench/fixtures/without-module'],
  },
})
  .append(
    ...layers.map(layer => ({
      name: `svc-auth/layers/${layer.name}`,
      files: layer.files,
      rules: {
        'no-restricted-imports': /** @type {['error', { patterns: Array<{ regex: string, message: string }> }]} */ (['error', {
          patterns: layer.forbid.map(({ regex, message }) => ({ regex, message })),
        }]),
      },
    })),
    typesLayer,
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
      files: ['src/runtime/app/pages/**'],
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
