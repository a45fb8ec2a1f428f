/**
 * Vitest global setup. First, a real redis-server for the integration tests: found, or installed when this
 * process may (root with apt-get: a fresh Debian machine, CI), or the run stops here with the one command that
 * fixes it, before any test (harness/ensure-redis-server.ts). Then: every temporary directory a test makes (workspaces, memory directories, redis-server
 * data, …) goes under one directory of this run, through TMPDIR, which `os.tmpdir()` follows; it is removed
 * when the run ends, so the suite leaves nothing behind in /tmp. The machine's load and cores are printed at
 * the start and at the end (harness/machine-load.ts), so a slow run can be read against the load.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureRedisServer, REDIS_SERVER_VARIABLE } from '../harness/ensure-redis-server.js';
import { machineLoadLine } from '../harness/machine-load.js';

export function setup(): () => void {
  const started = Date.now();
  process.stdout.write(machineLoadLine('start'));
  // Test workers inherit the environment: they start the same executable without searching again.
  process.env[REDIS_SERVER_VARIABLE] = ensureRedisServer();
  const root = mkdtempSync(join(tmpdir(), 'dreamd-tests-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true });
    process.stdout.write(machineLoadLine(`end, after ${Math.round((Date.now() - started) / 1000)} s`));
  };
}
