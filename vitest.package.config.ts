import { defineConfig } from 'vitest/config';

/**
 * `npm run test:package`: packs the package (its `prepack` builds dist/), installs the tarball in an empty
 * folder and runs the README's library example there. Apart from `npm test` because the build and the
 * install take a minute or two.
 */
export default defineConfig({
  test: {
    include: ['test/package/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
  },
});
