import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

/**
 * Fixtures the global setup builds once per run, in this order (`playground` is the repository's
 * playground app, the largest build: first, so that it does not finish alone at the end).
 */
export const FIXTURES = ['playground', 'basic', 'password', 'client', 'oauth', 'openapi', 'passkey', 'worker', 'serverless', 'org-access'] as const
export type Fixture = (typeof FIXTURES)[number]

/** Root directory of a fixture app: test/fixtures/<name>, or the playground. */
export const fixtureDir = (fixture: Fixture): string =>
  fixture === 'playground' ? resolve(import.meta.dirname, '../../playground') : resolve(import.meta.dirname, '../fixtures', fixture)

/** Nitro output directory of a built fixture (`.output`, as `nuxi build` writes it). */
export const fixtureOutput = (fixture: Fixture): string => join(fixtureDir(fixture), '.output')

/**
 * The server entry of a built fixture: Nitro's Node server, or the function of the `vercel`
 * preset (`serverless`), whose output the fixture keeps under `.output` as well.
 */
export const fixtureEntry = (fixture: Fixture): string =>
  join(fixtureOutput(fixture), fixture === 'serverless' ? 'functions/__fallback.func/index.mjs' : 'server/index.mjs')

/**
 * The arguments of `node` that serve a built fixture on `HOST`/`PORT`: Nitro's server entry, or
 * the function's handler served as its platform runs it (`test/support/serve-node-handler.mjs`).
 */
export const fixtureServerArgs = (fixture: Fixture): string[] =>
  fixture === 'serverless' ? [resolve(import.meta.dirname, '../support/serve-node-handler.mjs'), fixtureEntry(fixture)] : [fixtureEntry(fixture)]

/** A fresh, empty directory for the fs records of one server (or of several sharing it). */
export const newDataDir = (): string => mkdtempSync(join(tmpdir(), 'svc-auth-e2e-'))

/**
 * Environment every server process of the tests gets: production mode, and its fs records in
 * `dataDir` (the fixtures' fs driver would otherwise write under the working directory).
 */
export function serverEnv(dataDir: string): Record<string, string> {
  return { NODE_ENV: 'production', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: dataDir }
}
