import { defineConfig } from 'vitest/config';

/**
 * Unit tests run once. HTTP tests run against the embedded PGlite always, and again against a real
 * Postgres when TEST_DATABASE_URL is set (.ci/run sets it).
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

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 60_000 } },
      httpProject('pglite'),
      ...(process.env.TEST_DATABASE_URL ? [httpProject('postgres')] : []),
    ],
  },
});
