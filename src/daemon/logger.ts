import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

export interface CreateLoggerOptions {
  /** pino level; default DREAMD_LOG_LEVEL, else `info`. */
  readonly level?: string | undefined;
  /** Human-readable lines instead of JSON; default: when stdout is a terminal. */
  readonly pretty?: boolean | undefined;
  /** Where lines go; default stdout. */
  readonly destination?: NodeJS.WritableStream | undefined;
  /** Environment for NO_COLOR and DREAMD_LOG_LEVEL; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

const DEBUG_LEVELS = new Set(['debug', 'trace']);

/**
 * An error as one log field: name, message, and `kind`, `status`, `retryable` when the error carries them
 * (ModelError, ConfigError …), and the messages of its causes. The stack (and the stacks of the causes, which
 * made a failed job attempt a 6 KB line) only at level debug or trace.
 */
export function createErrorSerializer(withStack: boolean): (error: unknown) => unknown {
  return (error) => {
    if (!(error instanceof Error)) return error;
    if (withStack) return pino.stdSerializers.err(error);
    const details = (error as { details?: { kind?: unknown; status?: unknown; retryable?: unknown } })
      .details;
    const causes: string[] = [];
    for (let cause = error.cause; cause instanceof Error && causes.length < 5; cause = cause.cause) {
      causes.push(cause.message);
    }
    return {
      type: error.name,
      message: error.message,
      ...(details?.kind === undefined ? {} : { kind: details.kind }),
      ...(details?.status === undefined ? {} : { status: details.status }),
      ...(details?.retryable === undefined ? {} : { retryable: details.retryable }),
      ...(causes.length === 0 ? {} : { causes }),
    };
  };
}

/**
 * dreamd's structured logger: JSON lines (one object a line, for log collectors) when stdout is a pipe or a file,
 * readable lines on a terminal, coloured unless NO_COLOR is set (https://no-color.org). pino-pretty runs
 * in-process as a stream (no worker thread), which is plenty for a daemon that logs a few lines a minute.
 * Every line carries the daemon's `pid`; a `pid` in a log call (a child process's) becomes `childPid`, so no
 * line has the key twice.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const env = options.env ?? process.env;
  const level = options.level ?? env.DREAMD_LOG_LEVEL ?? 'info';
  const isPretty = options.pretty ?? process.stdout.isTTY === true;
  const base = {
    level,
    base: { pid: process.pid },
    serializers: { err: createErrorSerializer(DEBUG_LEVELS.has(level)) },
    formatters: {
      log(object: Record<string, unknown>): Record<string, unknown> {
        if (!('pid' in object)) return object;
        const { pid, ...rest } = object;
        return { ...rest, childPid: pid };
      },
    },
  };
  if (!isPretty) return options.destination ? pino(base, options.destination) : pino(base);
  const colorize = env.NO_COLOR === undefined || env.NO_COLOR === '';
  return pino(
    base,
    pretty({
      colorize,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname',
      sync: true,
      ...(options.destination ? { destination: options.destination } : {}),
    }),
  );
}
