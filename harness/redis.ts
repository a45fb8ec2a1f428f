import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ensureRedisServer } from './ensure-redis-server.js';
import { spawnRedisServer, type RedisServerProcess } from './redis-server.js';

/**
 * A real redis-server for integration tests, in its own temporary directory on a free port.
 *
 * States: running → (killed | stopped) → running again after restart() → … → stopped (directory removed).
 */
export interface TestRedis {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** True between start/restart and stop/kill. */
  readonly running: boolean;
  /** SIGTERM, wait, and remove the temporary directory. */
  stop(): Promise<void>;
  /** SIGKILL: a crash. The data directory stays for restart(). */
  kill(): Promise<void>;
  /** Starts redis-server again on the same port and directory (appendonly yes: the data comes back). */
  restart(): Promise<void>;
}

const running = new Set<TestRedis>();
const pids = new Map<TestRedis, number | undefined>();

// A test that fails before its cleanup must not leave redis-server behind: kill what is left when the test
// process exits ('exit' handlers are synchronous, so SIGKILL without waiting).
process.once('exit', () => {
  for (const pid of pids.values()) {
    if (pid === undefined) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** Redis servers started by this test file that are still running; an afterEach asserts this is empty. */
export function runningRedisServers(): number {
  return running.size;
}

export async function startRedis(): Promise<TestRedis> {
  // The tests' global setup found or installed it before any test ran (test/global-setup.ts), so this returns at
  // once there; a benchmark gets the same: installed when it may be, else the command that fixes it.
  const executable = ensureRedisServer();
  const root = mkdtempSync(join(tmpdir(), 'dreamd-redis-'));
  const dir = join(root, 'data');
  let server: RedisServerProcess | undefined = await spawnRedisServer({ executable, dir });
  const port = server.port;
  const handle: TestRedis = {
    url: server.url,
    port,
    dir,
    get running() {
      return server !== undefined;
    },
    async stop() {
      const current = server;
      server = undefined;
      running.delete(handle);
      pids.delete(handle);
      await current?.stop();
      rmSync(root, { recursive: true, force: true });
    },
    async kill() {
      const current = server;
      server = undefined;
      running.delete(handle);
      pids.delete(handle);
      await current?.kill();
    },
    async restart() {
      if (server !== undefined) await handle.kill();
      server = await spawnRedisServer({ executable, dir, port });
      running.add(handle);
      pids.set(handle, server.pid);
    },
  };
  running.add(handle);
  pids.set(handle, server.pid);
  return handle;
}

/** A fresh BullMQ key prefix for one test, so tests sharing a Redis never see each other's keys. */
export function uniquePrefix(label = 'test'): string {
  return `dreamd-${label.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 40)}-${randomBytes(4).toString('hex')}`;
}
