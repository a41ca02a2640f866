import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          alias: { '#svc-auth/features': new URL('./test/unit/helpers/features.ts', import.meta.url).pathname },
          environment: 'node',
          // The programs the tests run, and the Redis they share (started unless SVC_TEST_REDIS_URL names one).
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          // The same check and Redis as the unit tests (one Redis for both), then the fixture builds,
          // which run beside the unit tests: each e2e file waits for them (test/e2e/wait-for-builds.ts).
          globalSetup: ['test/support/global-setup.ts', 'test/e2e/global-setup.ts'],
          setupFiles: ['test/e2e/wait-for-builds.ts'],
          testTimeout: 60_000,
          hookTimeout: 240_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          // The packed module in a fresh app (also the Node 22 leg of .ci/run): the module is packed and the
          // app built beside the other tests (test/pack/global-setup.ts), then started and exercised.
          name: 'pack',
          include: ['test/pack/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/pack/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
})
