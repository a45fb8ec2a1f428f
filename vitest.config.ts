import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The packed-tarball test builds and installs the package: `npm run test:package` (vitest.package.config.ts).
    exclude: [...configDefaults.exclude, 'test/package/**'],
    // A timeout only catches a hang: integration tests start real redis-server processes, child processes and
    // fake model servers, and on a busy two-core machine a test that takes 5 s alone can take 40 s. No verdict
    // may depend on the machine's speed, so the bound is far above any test's time (the slowest, a minute,
    // set their own).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most files spend their time waiting (on redis-server, child processes, fake servers, the file system),
    // not computing: three files at once on two cores finish the suite in about half the time of vitest's
    // default there (cores − 1, one file at a time). More cores, one file per core.
    maxWorkers: Math.max(3, availableParallelism()),
    globalSetup: ['test/global-setup.ts'],
  },
});
