import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The packed-tarball test builds and installs the package: `npm run test:package` (vitest.package.config.ts).
    exclude: [...configDefaults.exclude, 'test/package/**'],
    // Integration tests start real redis-server processes and fake model servers; give them room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
  },
});
