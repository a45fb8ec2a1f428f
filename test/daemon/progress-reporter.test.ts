import { describe, expect, it, vi } from 'vitest';
import type { RunProgress } from '../../src/core/run.js';
import { createProgressReporter } from '../../src/daemon/consolidation-processor.js';

function recorder(): {
  written: RunProgress[];
  write: (progress: RunProgress) => Promise<void>;
  release: () => void;
} {
  const written: RunProgress[] = [];
  let waiting: (() => void)[] = [];
  return {
    written,
    write: (progress) =>
      new Promise<void>((resolve) => {
        written.push(progress);
        waiting.push(resolve);
      }),
    release: () => {
      const now = waiting;
      waiting = [];
      for (const resolve of now) resolve();
    },
  };
}

describe('progress reporter', () => {
  it('writes nothing for a run that ends before the delay', async () => {
    const target = recorder();
    const reporter = createProgressReporter(target.write, () => undefined, 1_000);
    reporter.report({ phase: 'orient', done: 0, total: 1 });
    reporter.report({ phase: 'write', done: 1, total: 1 });
    await reporter.finish();
    expect(target.written).toEqual([]);
  });

  it('keeps one write in flight and writes only the latest update reported meanwhile', async () => {
    const target = recorder();
    const reporter = createProgressReporter(target.write, () => undefined, 0);
    reporter.report({ phase: 'orient', done: 0, total: 1 });
    reporter.report({ phase: 'gather', done: 1, total: 3 });
    reporter.report({ phase: 'gather', done: 2, total: 3 });
    expect(target.written).toEqual([{ phase: 'orient', done: 0, total: 1 }]);
    const finished = reporter.finish();
    target.release();
    await vi.waitFor(() => expect(target.written).toHaveLength(2));
    target.release();
    await finished;
    expect(target.written).toEqual([
      { phase: 'orient', done: 0, total: 1 },
      { phase: 'gather', done: 2, total: 3 },
    ]);
  });

  it('starts writing after the delay, the latest update first', async () => {
    vi.useFakeTimers();
    try {
      const target = recorder();
      const reporter = createProgressReporter(target.write, () => undefined, 20);
      reporter.report({ phase: 'orient', done: 0, total: 1 });
      reporter.report({ phase: 'extract', done: 0, total: 2 });
      await vi.advanceTimersByTimeAsync(19);
      expect(target.written).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(target.written).toEqual([{ phase: 'extract', done: 0, total: 2 }]);
      target.release();
      await reporter.finish();
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a failed write and goes on', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const reporter = createProgressReporter(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('redis down');
      },
      (error) => errors.push(error),
      0,
    );
    reporter.report({ phase: 'orient', done: 0, total: 1 });
    reporter.report({ phase: 'write', done: 1, total: 1 });
    await reporter.finish();
    expect(errors).toHaveLength(1);
    expect(calls).toBe(2);
  });
});
