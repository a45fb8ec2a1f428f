import { DreamdError, errorMessage } from '../errors.js';

/** Where a command writes. Injected so tests can run commands in-process and read what they print. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** True when stdout is a terminal: colours and pretty logs only then. */
  readonly isTty: boolean;
  /** True when stderr is a terminal: the progress bar (drawn on stderr) only then. Default false. */
  readonly stderrIsTty?: boolean;
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTty: process.stdout.isTTY === true,
    stderrIsTty: process.stderr.isTTY === true,
  };
}

/** Exit codes of every command: 0 success, 1 failure, 2 bad usage or config. */
/**
 * 0 done; 1 failed; 2 bad usage or config; 3 ran, but sessions that were due wait (a lost lock, the output
 * limit, a refusal, a dropped answer, a budget): the output names them and why.
 */
export const ExitCode = { ok: 0, failure: 1, usage: 2, incomplete: 3 } as const;
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

/**
 * The one shape of every command's `--json` output:
 * - success: `{ "ok": true, "command": "history", "data": … }`
 * - a command that ran but found problems (a failed doctor check, a space whose run failed):
 *   `{ "ok": false, "command": "doctor", "data": … }`
 * - an error that stopped the command (bad usage, bad config, a refusal): `{ "ok": false, "command": …,
 *   "error": { "name", "message", … } }`, exit code 1 or 2.
 */
export type JsonEnvelope<T = unknown> =
  | { readonly ok: boolean; readonly command: string; readonly data: T }
  | { readonly ok: false; readonly command: string; readonly error: JsonError };

export interface JsonError {
  readonly name: string;
  readonly message: string;
  readonly [detail: string]: unknown;
}

/** Prints a command's result: the envelope under --json, else the human text. */
export function emitResult(
  io: CliIo,
  json: boolean,
  result: { readonly command: string; readonly data: unknown; readonly ok?: boolean },
  human: () => string,
): void {
  const envelope: JsonEnvelope = { ok: result.ok ?? true, command: result.command, data: result.data };
  emit(io, json, envelope, human);
}

/** Prints the error envelope (under --json) for an error the command reports itself. */
export function emitError(io: CliIo, command: string, error: JsonError): void {
  const envelope: JsonEnvelope = { ok: false, command, error };
  io.stdout(`${JSON.stringify(envelope, null, 2)}\n`);
}

/** Reports an error the way every command does, and returns the exit code to use. */
export function reportError(io: CliIo, json: boolean, error: unknown, command = 'dreamd'): ExitCode {
  const code: ExitCode =
    error instanceof CommandExit
      ? error.code
      : error instanceof DreamdError
        ? (error.exitCode as ExitCode)
        : 1;
  if (error instanceof CommandExit) return code;
  const name = error instanceof Error ? error.name : 'Error';
  if (json) emitError(io, command, { name, message: errorMessage(error) });
  else io.stderr(`dreamd: ${errorMessage(error)}\n`);
  return code;
}

/** A usage error (unknown command or option, missing argument) under --json: the envelope, exit code 2. */
export function reportUsageError(io: CliIo, command: string, error: { code: string; message: string }): void {
  emitError(io, command, {
    name: 'UsageError',
    message: error.message.replace(/^error: /, ''),
    code: error.code,
    fix: `see dreamd ${command === 'dreamd' ? '' : `${command} `}--help`,
  });
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
