import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Command, Help } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/output.js';
import { entryName, runProgram, type CommandEntry } from '../../src/cli/program.js';
import { COMMANDS } from '../../src/cli/run-cli.js';

/**
 * The CLI's command table: `dreamd --help` and `--version` load no command module (so they answer before the
 * pipeline, the SDKs or zod are read), a command loads only its own, and the table says what the modules say.
 */

function captured(): CliIo & { readonly out: () => string } {
  let out = '';
  return {
    stdout: (text) => {
      out += text;
    },
    stderr: () => undefined,
    env: {},
    cwd: process.cwd(),
    isTty: false,
    out: () => out,
  };
}

const BIN = new URL('../../bin/dreamd.js', import.meta.url).pathname;
const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The table with each load counted by the entry's name. */
function countingTable(loaded: string[]): CommandEntry[] {
  return COMMANDS.map((entry) => ({
    ...entry,
    load: () => {
      loaded.push(entryName(entry));
      return entry.load();
    },
  }));
}

describe('the command table', () => {
  it('answers --help, --version and an unknown command without loading any command module', async () => {
    for (const argv of [['--help'], ['-V'], ['--version'], ['help'], ['frobnicate'], []]) {
      const loaded: string[] = [];
      await runProgram(argv, captured(), countingTable(loaded));
      expect(loaded, argv.join(' ')).toEqual([]);
    }
    const io = captured();
    await runProgram(['--help'], io, COMMANDS);
    for (const entry of COMMANDS) expect(io.out()).toContain(entry.usage);
  });

  it('loads only the module of the command that runs, for its help too', async () => {
    for (const [argv, name, usage] of [
      [['memory', 'show', '--help'], 'memory', 'Usage: dreamd memory show'],
      [['--json', 'help', 'history'], 'history', 'Usage: dreamd history'],
      [['--config', 'x.json', 'worker', '--help'], 'worker', 'Usage: dreamd worker'],
    ] as const) {
      const loaded: string[] = [];
      const io = captured();
      expect(await runProgram(argv, io, countingTable(loaded))).toBe(0);
      expect(loaded).toEqual([name]);
      expect(io.out()).toContain(usage);
    }
  });

  it('lists each command with the description and arguments its module gives it', async () => {
    const help = new Help();
    for (const entry of COMMANDS) {
      const program = new Command('dreamd');
      (await entry.load())(program, () => {
        throw new Error('no action runs here');
      });
      const command = program.commands.find((candidate) => candidate.name() === entryName(entry));
      expect(command, entry.usage).toBeDefined();
      expect(entry.summary).toBe(command!.description());
      expect(entry.usage).toBe(help.subcommandTerm(command!).replace(' [options]', ''));
    }
  });

  it('the executable prints the version and the command list', async () => {
    const run = promisify(execFile);
    for (const flag of ['--version', '-V'])
      expect((await run('node', [BIN, flag])).stdout).toBe(`${VERSION}\n`);
    const help = (await run('node', [BIN, '--help'])).stdout;
    for (const entry of COMMANDS) expect(help).toContain(entry.usage);
  });
});
