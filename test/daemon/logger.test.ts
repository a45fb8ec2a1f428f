import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/daemon/logger.js';
import { ModelError } from '../../src/errors.js';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/** An ANSI escape sequence (colour codes start with ESC [). */
const ANSI = new RegExp(String.fromCharCode(27) + '\\[');

function failedAttempt(): ModelError {
  const cause = new Error('socket hang up');
  return new ModelError(
    'anthropic:claude-haiku-5-5: HTTP 529 (overloaded)',
    { status: 529, retryable: true, kind: 'overloaded' },
    { cause },
  );
}

describe('createLogger', () => {
  it('colours readable lines on a terminal, and not when NO_COLOR is set', () => {
    const coloured = capture();
    createLogger({ pretty: true, env: {}, destination: coloured.stream }).warn('job attempt failed');
    expect(coloured.text()).toMatch(ANSI);

    const plain = capture();
    createLogger({ pretty: true, env: { NO_COLOR: '1' }, destination: plain.stream }).warn(
      'job attempt failed',
    );
    expect(plain.text()).toContain('job attempt failed');
    expect(plain.text()).not.toMatch(ANSI);
  });

  it('writes one pid key a line: a child process pid in the call becomes childPid', () => {
    const out = capture();
    createLogger({ pretty: false, env: {}, destination: out.stream }).info(
      { pid: 4242 },
      'started a private redis-server',
    );
    const line = out.text().trim();
    expect(line.match(/"pid":/g)).toHaveLength(1);
    expect(JSON.parse(line)).toMatchObject({ pid: process.pid, childPid: 4242 });
  });

  it('logs a failed attempt compactly (message, kind, status, causes) and the stacks only at debug level', () => {
    const info = capture();
    createLogger({ pretty: false, env: {}, destination: info.stream }).warn(
      { jobId: 'j1', attempt: 2, err: failedAttempt() },
      'job attempt failed',
    );
    const compact = JSON.parse(info.text()) as { err: Record<string, unknown>; attempt: number };
    expect(compact.err).toEqual({
      type: 'ModelError',
      message: 'anthropic:claude-haiku-5-5: HTTP 529 (overloaded)',
      kind: 'overloaded',
      status: 529,
      retryable: true,
      causes: ['socket hang up'],
    });
    expect(compact.attempt).toBe(2);
    expect(info.text()).not.toContain('"stack"');

    const debug = capture();
    createLogger({ pretty: false, level: 'debug', env: {}, destination: debug.stream }).warn(
      { err: failedAttempt() },
      'job attempt failed',
    );
    expect((JSON.parse(debug.text()) as { err: { stack: string } }).err.stack).toContain('logger.test.ts');
  });
});
