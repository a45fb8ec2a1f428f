import { DreamdError, errorMessage } from '../errors.js';

/** Where a command writes. Injected so tests can run commands in-process and read what they print. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** True when stdout is a terminal: progress bars and colours only then. */
  readonly isTty: boolean;
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTty: process.stdout.isTTY === true,
  };
}

/** Exit codes of every command: 0 success, 1 failure, 2 bad usage or config. */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Thrown by a command to end with a given exit code after it has printed its own report. */
export class CommandExit extends Error {
  constructor(readonly code: ExitCode) {
    super(`exit ${code}`);
  }
}

/** Prints either the human text or, with --json, the data as one JSON document. */
export function emit(io: CliIo, json: boolean, data: unknown, human: () => string): void {
  if (json) io.stdout(`${JSON.stringify(data, null, 2)}\n`);
  else {
    const text = human();
    if (text !== '') io.stdout(text.endsWith('\n') ? text : `${text}\n`);
  }
}

/** Reports an error the way every command does, and returns the exit code to use. */
export function reportError(io: CliIo, json: boolean, error: unknown): ExitCode {
  const code: ExitCode =
    error instanceof CommandExit
      ? error.code
      : error instanceof DreamdError
        ? (error.exitCode as ExitCode)
        : 1;
  if (error instanceof CommandExit) return code;
  const name = error instanceof Error ? error.name : 'Error';
  if (json)
    io.stdout(`${JSON.stringify({ ok: false, error: { name, message: errorMessage(error) } }, null, 2)}\n`);
  else io.stderr(`dreamd: ${errorMessage(error)}\n`);
  return code;
}

/** Pads columns for a plain-text table. */
export function table(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
