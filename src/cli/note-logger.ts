/**
 * The logger of a command that prints for a person (`consolidate` without --json): each log line (a model
 * call's retry, a warning) becomes one readable line, `WARN: model call failed, retrying in 2000 ms: …`,
 * handed to `note` (the progress bar's, which prints it above the bar). Under --json and in the daemon the
 * lines stay pino's JSON (`createLogger`).
 */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { createErrorSerializer } from '../daemon/logger.js';

export interface NoteLoggerOptions {
  /** Receives each line, without its newline. */
  readonly note: (line: string) => void;
  /** pino level; default `warn` (a run's info lines are its summary's job). */
  readonly level?: string;
  /** Coloured lines (a terminal, NO_COLOR unset). Default false. */
  readonly colorize?: boolean;
}

export function createNoteLogger(options: NoteLoggerOptions): Logger {
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim() !== '') options.note(line.trimEnd());
      done();
    },
  });
  return pino(
    { level: options.level ?? 'warn', serializers: { err: createErrorSerializer(false) } },
    pretty({
      colorize: options.colorize ?? false,
      // One line a record: the level and the message, which names what happened and what follows.
      hideObject: true,
      ignore: 'pid,hostname,time',
      sync: true,
      destination: lines,
    }),
  );
}
