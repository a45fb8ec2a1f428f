import { PassThrough } from 'node:stream';
import { createProgressBar, type RunProgressBar } from '../../src/cli/progress.js';
import { runCli } from '../../src/cli/run-cli.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON (for --json runs): the envelope `{ ok, command, data | error }`. */
  json<T = unknown>(): T;
  /** The envelope's `data` (for --json runs of commands that use it); throws when there is none. */
  data<T = unknown>(): T;
}

/** Runs the CLI in this process with captured output; the environment is only what is passed. */
export async function runCliCaptured(
  argv: readonly string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
    cwd: options.cwd,
    isTty: false,
  });
  const json = <T>() => JSON.parse(stdout) as T;
  return {
    code,
    stdout,
    stderr,
    json,
    data: <T>() => {
      const envelope = json<{ data?: T }>();
      if (!('data' in envelope)) throw new Error(`no data in the --json output: ${stdout}`);
      return envelope.data;
    },
  };
}

/**
 * What the progress bar draws on its stream (not a terminal) for the space `shop` at extract 1 of 2, when `use`
 * has done what it does to the bar before it stops.
 */
export function drawProgressBar(use: (bar: RunProgressBar) => void = () => undefined): string {
  const stream = new PassThrough();
  let drawn = '';
  stream.on('data', (chunk: Buffer) => (drawn += chunk.toString()));
  const bar = createProgressBar({ stream, noTTYOutput: true });
  bar.start('shop');
  bar.update({ phase: 'extract', done: 1, total: 2 });
  use(bar);
  bar.stop();
  return drawn;
}
