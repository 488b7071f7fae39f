import { defineConfig } from 'vitest/config';

/**
 * Unit tests run once. HTTP tests run against the embedded PGlite always, and again against a real
 * Postgres when TEST_DATABASE_URL is set (.ci/run sets it). The fault suite (processes, kill -9,
 * database restarts) runs only through `npm run test:faults`.
 */
const httpProject = (name: 'pglite' | 'postgres') => ({
  test: {
    name,
    include: ['test/http/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    env: { TEST_DB_KIND: name },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

const onlyFaults = process.argv.includes('faults');

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 60_000 } },
      httpProject('pglite'),
      ...(process.env.TEST_DATABASE_URL ? [httpProject('postgres')] : []),
      {
        test: {
          name: 'fuzz',
          include: ['test/fuzz/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          env: { TEST_DB_KIND: 'pglite' },
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      // One Chromium and one service at a time: two consoles training side by side on 2 cores timed out a step.
      { test: { name: 'browser', include: ['test/browser/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000, fileParallelism: false } },
      ...(onlyFaults
        ? [{ test: { name: 'faults', include: ['test/faults/**/*.test.ts'], testTimeout: 180_000, hookTimeout: 120_000, fileParallelism: false } }]
        : []),
    ],
  },
});
