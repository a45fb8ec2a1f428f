import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real redis-server processes and fake model servers; give them room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
  },
});
