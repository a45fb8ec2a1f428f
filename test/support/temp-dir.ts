/**
 * The tests' temp folders, each removed after the test (or the file) that made it. Apart from the other
 * fixtures so that `space.ts` and `fixtures.ts` both use it without importing each other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, onTestFinished } from 'vitest';

/** A fresh temporary folder `dreamd-<prefix>-…` and its removal: the one temp-folder helper of the tests. */
export async function createTempDir(prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `dreamd-${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/**
 * A fresh temporary folder `dreamd-<prefix>-…`, made now (synchronously) and removed when the running test
 * finishes (vitest's `onTestFinished`, after the `afterEach` hooks, so a daemon they stop is gone first): for
 * helpers that make folders on demand. Call it inside a test or its `beforeEach`; anywhere else (describe
 * level, `beforeAll`) vitest throws "can only be called inside a test" and no folder is made — there, use
 * `createTempDir` and remove it in `afterAll`.
 */
export function tempDirRemovedAfterTest(prefix: string): string {
  const made: string[] = [];
  // Registered before the folder is made: outside a test vitest throws here, and nothing is left behind.
  onTestFinished(() => {
    for (const path of made) rmSync(path, { recursive: true, force: true });
  });
  const path = mkdtempSync(join(tmpdir(), `dreamd-${prefix}-`));
  made.push(path);
  return path;
}

/** A fresh temp folder for each test of the enclosing describe (or file), removed after it: `dir.path`. */
export function useTempDir(prefix: string): { readonly path: string } {
  let current: { path: string; remove: () => Promise<void> } | undefined;
  beforeEach(async () => {
    current = await createTempDir(prefix);
  });
  afterEach(async () => {
    await current?.remove();
    current = undefined;
  });
  return {
    get path() {
      if (current === undefined) throw new Error('the temp folder exists only inside a test');
      return current.path;
    },
  };
}
