import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

export interface CreateLoggerOptions {
  /** pino level; default DREAMD_LOG_LEVEL, else `info`. */
  readonly level?: string | undefined;
  /** Human-readable lines instead of JSON; default: when stdout is a terminal. */
  readonly pretty?: boolean | undefined;
  /** Where lines go; default stdout. The CLI's one-shot commands log to stderr, beside their output. */
  readonly destination?: ((line: string) => void) | undefined;
}

/**
 * dreamd's structured logger: JSON lines (one object a line, for log collectors) when stdout is a pipe or a file,
 * colourised readable lines on a terminal. pino-pretty runs in-process as a stream (no worker thread), which is
 * plenty for a daemon that logs a few lines a minute.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const level = options.level ?? process.env.DREAMD_LOG_LEVEL ?? 'info';
  const isPretty = options.pretty ?? process.stdout.isTTY === true;
  const base = { level, base: { pid: process.pid }, serializers: { err: pino.stdSerializers.err } };
  const write = options.destination;
  const stream =
    write !== undefined
      ? new Writable({
          write(chunk: Buffer | string, _encoding, done) {
            write(String(chunk));
            done();
          },
        })
      : undefined;
  if (!isPretty) return stream !== undefined ? pino(base, stream) : pino(base);
  return pino(
    base,
    pretty({
      colorize: true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname',
      sync: true,
      ...(stream !== undefined ? { destination: stream } : {}),
    }),
  );
}
