import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import { createLogger } from '../../src/daemon/logger.js';
import { controlProcess } from '../../src/daemon/signals.js';
import { eventually, makeConfig, silentLogger } from './fakes.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

/** A daemon that records reloads and stops; the process-control code only calls these. */
function recordingDaemon(config: Config): Daemon & { reloads: Config[]; stops: number } {
  const reloads: Config[] = [];
  let stops = 0;
  return {
    state: 'running',
    config,
    redisUrl: undefined,
    queueKind: undefined,
    server: undefined,
    address: undefined,
    start: async () => undefined,
    stop: async () => {
      stops++;
    },
    reload: (next) => {
      reloads.push(next);
    },
    tick: () => Promise.reject(new Error('no scheduler')),
    health: () => Promise.reject(new Error('no health')),
    reloads,
    get stops() {
      return stops;
    },
  };
}

type RecordingDaemon = ReturnType<typeof recordingDaemon>;

/** A config whose Redis is never reached: process control only hands it to reload. */
const unreachable = (): Config => makeConfig({ redisUrl: 'redis://127.0.0.1:1', redisPrefix: 'x' });

/**
 * Runs `use` with a recording daemon of `config` under process control (on fake timers when asked), the config
 * loaded on a reload being `loadConfig`'s (the daemon's own by default); releases the control after, and
 * returns the daemon.
 */
async function underControl(
  use: (daemon: RecordingDaemon) => Promise<void>,
  options: {
    readonly config?: Config;
    readonly loadConfig?: () => Config;
    readonly onStopped?: (signal: string) => void;
    readonly fakeTimers?: boolean;
  } = {},
): Promise<RecordingDaemon> {
  if (options.fakeTimers === true) vi.useFakeTimers();
  const daemon = recordingDaemon(options.config ?? unreachable());
  const release = controlProcess({
    daemon,
    logger: silentLogger,
    loadConfig: options.loadConfig ?? (() => daemon.config),
    ...(options.onStopped === undefined ? {} : { onStopped: options.onStopped }),
  });
  try {
    await use(daemon);
  } finally {
    release();
    if (options.fakeTimers === true) vi.useRealTimers();
  }
  return daemon;
}

describe('process control', () => {
  it('reloads on SIGHUP and keeps the old config when the new one is invalid', async () => {
    const config = unreachable();
    let next: Config | Error = { ...config, schedule: '*/5 * * * *' };
    const loadConfig = () => {
      if (next instanceof Error) throw next;
      return next;
    };
    const daemon = await underControl(
      async (controlled) => {
        process.emit('SIGHUP');
        await vi.advanceTimersByTimeAsync(100);
        expect(controlled.reloads.map((reloaded) => reloaded.schedule)).toEqual(['*/5 * * * *']);
        next = new Error('dreamd.config.json is not valid JSON');
        process.emit('SIGHUP');
        await vi.advanceTimersByTimeAsync(100);
        expect(controlled.reloads).toHaveLength(1);
      },
      { config, loadConfig, fakeTimers: true },
    );
    // Released: a SIGHUP is no longer a reload.
    process.emit('SIGHUP');
    expect(daemon.reloads).toHaveLength(1);
  });

  it('takes a SIGHUP that comes with a SIGCONT (an orphaned stopped process) as no reload', async () => {
    await underControl(
      async (daemon) => {
        // The kernel's order: SIGHUP, then SIGCONT, a few milliseconds apart in the event loop.
        process.emit('SIGHUP');
        await vi.advanceTimersByTimeAsync(3);
        process.emit('SIGCONT');
        await vi.advanceTimersByTimeAsync(200);
        expect(daemon.reloads).toHaveLength(0);
        // A person's SIGHUP later is a reload again.
        await vi.advanceTimersByTimeAsync(5_000);
        process.emit('SIGHUP');
        await vi.advanceTimersByTimeAsync(100);
        expect(daemon.reloads).toHaveLength(1);
      },
      { fakeTimers: true },
    );
  });

  it('stops the daemon on SIGTERM', async () => {
    const stoppedBy: string[] = [];
    await underControl(
      async (daemon) => {
        process.emit('SIGTERM');
        await eventually(() => stoppedBy.length === 1, 2_000, 'the stop');
        expect(daemon.stops).toBe(1);
        expect(stoppedBy).toEqual(['SIGTERM']);
      },
      { onStopped: (signal) => stoppedBy.push(signal) },
    );
  });

  it('reloads when the config file is replaced', async () => {
    const dir = tempDirRemovedAfterTest('watch');
    const file = join(dir, 'dreamd.config.json');
    writeFileSync(file, '{}');
    await underControl(
      async (daemon) => {
        writeFileSync(join(dir, 'other.json'), '{}');
        writeFileSync(`${file}.tmp`, '{"spaces": []}');
        writeFileSync(file, '{"spaces": []}');
        await eventually(() => daemon.reloads.length === 1, 60_000, 'a reload');
      },
      { config: { ...unreachable(), source: file } },
    );
  });
});

describe('createLogger', () => {
  it('writes JSON lines when not pretty', () => {
    const logger = createLogger({ pretty: false, level: 'info' });
    expect(logger.level).toBe('info');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    pino({ level: 'info' }, sink).info({ spaceId: 'alpha' }, 'hello');
    expect(JSON.parse(lines[0]!)).toMatchObject({ spaceId: 'alpha', msg: 'hello' });
  });

  it('builds a pretty logger for terminals', () => {
    expect(createLogger({ pretty: true, level: 'warn' }).level).toBe('warn');
  });
});
