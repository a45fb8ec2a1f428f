import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createRepeatedLog } from '../../src/daemon/repeated-log.js';

function capture(): { logger: pino.Logger; messages: () => string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return {
    logger: pino({ level: 'info' }, stream),
    messages: () => lines.map((line) => (JSON.parse(line) as { msg: string }).msg),
  };
}

describe('createRepeatedLog', () => {
  it('logs the first error of a kind, then one count when the window closes', async () => {
    vi.useFakeTimers();
    try {
      const { logger, messages } = capture();
      const log = createRepeatedLog(logger, 'worker error', { windowMs: 30_000 });
      for (let attempt = 0; attempt < 285; attempt++) {
        log.report(new Error(`READONLY You can't write against a read only replica. (attempt ${attempt})`));
      }
      expect(messages()).toEqual(['worker error']);
      await vi.advanceTimersByTimeAsync(30_000);
      expect(messages()).toEqual(['worker error', 'worker error: the same error 284 more time(s) in 30 s']);
      // The window closed: the next one is logged again.
      log.report(new Error("READONLY You can't write against a read only replica. (attempt 999)"));
      expect(messages()).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps a window per kind of error, and flush logs the counts of open windows', () => {
    const { logger, messages } = capture();
    const log = createRepeatedLog(logger, 'queue error');
    log.report(new Error('READONLY refused'));
    log.report(new Error('OOM command not allowed'));
    log.report(new Error('OOM command not allowed'));
    expect(messages()).toEqual(['queue error', 'queue error']);
    log.flush();
    expect(messages()).toEqual([
      'queue error',
      'queue error',
      'queue error: the same error 1 more time(s) in 30 s',
    ]);
  });
});
