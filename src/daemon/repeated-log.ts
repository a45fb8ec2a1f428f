import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';

/**
 * Logs an error the first time it is seen, then only counts repeats of the same kind for `windowMs` and logs the
 * count once when the window closes. During an outage BullMQ's worker reports the same Redis error on every
 * attempt to fetch a job (hundreds in 30 s); a person reading the log needs the first, the count and the end.
 *
 * The kind of an error is its message with digits blanked, so "READONLY … 127.0.0.1:6379" of every attempt is one
 * kind while a different error starts its own window.
 *
 * States per kind: quiet → (error) logged, window open → (repeats) counting → (window closes) the count is
 * logged if there was any, and the kind is quiet again.
 */
export interface RepeatedLog {
  report(error: unknown): void;
  /** Logs the counts of open windows now and forgets them (at shutdown). */
  flush(): void;
}

export function createRepeatedLog(
  logger: Logger,
  message: string,
  options: { windowMs?: number; level?: 'warn' | 'error' } = {},
): RepeatedLog {
  const windowMs = options.windowMs ?? 30_000;
  const level = options.level ?? 'warn';
  const open = new Map<string, { repeats: number; sample: string; timer: NodeJS.Timeout }>();

  const close = (kind: string): void => {
    const entry = open.get(kind);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    open.delete(kind);
    if (entry.repeats > 0) {
      logger[level](
        { error: entry.sample, repeats: entry.repeats, windowMs },
        `${message}: the same error ${entry.repeats} more time(s) in ${Math.round(windowMs / 1000)} s`,
      );
    }
  };

  return {
    report(error) {
      const text = errorMessage(error);
      const kind = text.replace(/\d+/g, '#');
      const entry = open.get(kind);
      if (entry !== undefined) {
        entry.repeats += 1;
        return;
      }
      logger[level]({ err: error }, message);
      const timer = setTimeout(() => close(kind), windowMs);
      timer.unref();
      open.set(kind, { repeats: 0, sample: text, timer });
    },
    flush() {
      for (const kind of [...open.keys()]) close(kind);
    },
  };
}
