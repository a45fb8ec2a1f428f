/**
 * Vitest global setup: every temporary directory a test makes (workspaces, memory directories, redis-server
 * data, …) goes under one directory of this run, through TMPDIR, which `os.tmpdir()` follows; it is removed
 * when the run ends, so the suite leaves nothing behind in /tmp.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'dreamd-tests-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true });
  };
}
