import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryName } from '../../src/cli/program.js';
import { COMMANDS } from '../../src/cli/run-cli.js';
import { createTempDir } from '../support/fixtures.js';

/**
 * What `--help` reads: the real executable runs `<command> --help` for every command and subcommand with a
 * resolve hook that lists the packages it imports. A help is the command table, commander and the command's
 * own registration, never the pipeline's libraries (Redis, the queue, the HTTP server, the model SDKs, zod):
 * loading those is what made `--help` take most of a second. How long a help takes is `npm run bench`'s.
 */

const BIN = new URL('../../bin/dreamd.js', import.meta.url).pathname;
const run = promisify(execFile);

/** The packages a help may import; the runner of a checkout compiles changed sources with esbuild. */
const ALLOWED = ['commander', 'esbuild'];

let folder: string;
let removeFolder: (() => Promise<void>) | undefined;
let register: string;

beforeAll(async () => {
  ({ path: folder, remove: removeFolder } = await createTempDir('help-loads'));
  const hooks = join(folder, 'list-packages.mjs');
  writeFileSync(
    hooks,
    [
      'export async function resolve(specifier, context, next) {',
      '  if (!/^[./]|^node:|^file:|^data:/.test(specifier)) process.stderr.write(`package ${specifier}\\n`);',
      '  return next(specifier, context);',
      '}',
    ].join('\n'),
  );
  register = join(folder, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
});

afterAll(async () => {
  await removeFolder?.();
});

/** Every command line whose help there is: `[]` (dreamd itself), each command and each of its subcommands. */
async function helpLines(): Promise<string[][]> {
  const lines: string[][] = [[]];
  for (const entry of COMMANDS) {
    const program = new Command('dreamd');
    (await entry.load())(program, () => {
      throw new Error('no action runs here');
    });
    const command = program.commands.find((candidate) => candidate.name() === entryName(entry))!;
    lines.push([command.name()]);
    for (const sub of command.commands) lines.push([command.name(), sub.name()]);
  }
  return lines;
}

/** The packages `dreamd <line> --help` imports, by name (`@scope/name/sub` → `@scope/name`). */
async function packagesOfHelp(line: readonly string[]): Promise<string[]> {
  const { stdout, stderr } = await run('node', ['--import', register, BIN, ...line, '--help'], {
    env: { PATH: process.env.PATH, HOME: folder },
  });
  expect(stdout, line.join(' ')).toContain('Usage: dreamd');
  const names = [...stderr.matchAll(/^package (\S+)$/gm)].map((match) => {
    const parts = match[1]!.split('/');
    return parts[0]!.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  });
  return [...new Set(names)].sort();
}

describe('--help', () => {
  it('of dreamd and of every command and subcommand imports commander and no other package', async () => {
    const lines = await helpLines();
    expect(lines.length).toBeGreaterThan(COMMANDS.length);
    const imported: Record<string, string[]> = {};
    // Four at a time: each is a Node process.
    for (let start = 0; start < lines.length; start += 4) {
      const batch = lines.slice(start, start + 4);
      const found = await Promise.all(batch.map((line) => packagesOfHelp(line)));
      batch.forEach((line, index) => {
        const extra = found[index]!.filter((name) => !ALLOWED.includes(name));
        if (extra.length > 0) imported[`${['dreamd', ...line].join(' ')} --help`] = extra;
      });
    }
    // A failure names each help and the packages it should not have imported.
    expect(imported).toEqual({});
  });
});
