import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/**
 * A `redis-server` child process bound to 127.0.0.1 on a free port, started by the integration tests and the
 * benchmarks (dreamd itself never starts one: without Redis it runs the embedded queue).
 *
 * States: starting → ready → stopping → exited. `exited` is also reached from any state when the process dies on
 * its own (or is SIGKILLed by a test); `exited` resolves then.
 */
export interface RedisServerProcess {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly pid: number | undefined;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  readonly exited: Promise<number | string>;
  /** SIGTERM (redis flushes the append-only file), then waits for the exit; SIGKILL after `timeoutMs` (5 s). */
  stop(timeoutMs?: number): Promise<void>;
  /** SIGKILL, no flush: a crash. Resolves once the process is gone. */
  kill(): Promise<void>;
}

export interface SpawnRedisServerOptions {
  /** Path of the redis-server executable. */
  readonly executable: string;
  /** Data directory (append-only file); created if missing. */
  readonly dir: string;
  /** TCP port on 127.0.0.1; 0 or undefined picks a free one. */
  readonly port?: number | undefined;
  /** How long to wait for "Ready to accept connections", in ms. Default 10 s. */
  readonly readyTimeoutMs?: number;
}

/** Finds an executable in PATH, or undefined. */
export function findExecutable(
  name: string,
  path: string | undefined = process.env.PATH,
): string | undefined {
  for (const directory of (path ?? '').split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the port of a probe socket'));
      });
    });
  });
}

function waitForExit(child: ChildProcess): Promise<number | string> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else if (child.signalCode !== null) resolve(child.signalCode);
    else child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
}

/**
 * Starts redis-server with an append-only file (`appendonly yes`, fsync every second: at most one second of
 * writes lost on a crash) and no RDB snapshots, and resolves once it accepts connections.
 */
export async function spawnRedisServer(options: SpawnRedisServerOptions): Promise<RedisServerProcess> {
  const fixed = options.port !== undefined && options.port !== 0;
  // A free port found by a probe socket can be taken by another process before redis-server binds it (tests run
  // in parallel): on "Address already in use" with a port of our choosing, pick another and start again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOnce(
        options,
        fixed && options.port !== undefined ? options.port : await findFreePort(),
      );
    } catch (error) {
      const taken = error instanceof Error && /already in use/i.test(error.message);
      if (fixed || !taken || attempt >= 5) throw error;
    }
  }
}

async function spawnOnce(options: SpawnRedisServerOptions, port: number): Promise<RedisServerProcess> {
  mkdirSync(options.dir, { recursive: true });
  const child = spawn(
    options.executable,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      options.dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
      '--daemonize',
      'no',
      '--protected-mode',
      'yes',
      // BullMQ needs keys it created to stay: never evict.
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = waitForExit(child);
  let output = '';
  const timeoutMs = options.readyTimeoutMs ?? 10_000;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server on port ${port} was not ready after ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`));
    });
  });
  // Keep draining the pipes so a chatty server never blocks on a full pipe.
  child.stdout?.resume();
  child.stderr?.resume();

  const isRunning = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir: options.dir,
    pid: child.pid,
    exited,
    async stop(stopTimeoutMs = 5_000) {
      if (!isRunning()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (isRunning()) child.kill('SIGKILL');
      await exited;
    },
  };
}
