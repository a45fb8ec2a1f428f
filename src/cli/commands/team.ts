/**
 * `dreamd team`: memory shared with a team through the repository's `AGENTS.md`.
 *
 * - `team setup [path]` makes git merge `AGENTS.md` with dreamd's driver in that repository: a line in
 *   `.gitattributes` (`AGENTS.md merge=dreamd`, added once, the rest of the file kept) and the driver in the
 *   repository's git config (`merge.dreamd.driver`), which runs this very dreamd.
 * - `team merge <base> <ours> <theirs>` is the driver git runs (`%O %A %B`): dreamd's block merged fact by fact
 *   (`memory/agents-merge.ts`), the rest line by line by `git merge-file`; the result goes into `<ours>`, exit 0
 *   when clean, 1 when the text outside the block conflicts (as git's own merge would).
 * - `team share <id> [space]` and `team personal <id> [space]` move a fact between a space's personal memory
 *   and the team's block (`.dreamd/sharing.json`); the next run writes the block.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../../errors.js';
import type { CommandContext, CommandRegistrar } from '../program.js';
import { CommandExit, ExitCode, emitResult } from '../output.js';
import { namedSpace, withSpace } from '../space-argument.js';
import { packageRoot } from '../version.js';

/** The line `.gitattributes` gets. */
export const GITATTRIBUTES_LINE = 'AGENTS.md merge=dreamd';

function git(args: readonly string[], cwd: string): { ok: boolean; stdout: string; stderr: string } {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
  return {
    ok: result.status === 0,
    stdout: result.stdout ?? '',
    stderr: result.stderr ?? result.error?.message ?? '',
  };
}

/** A word for a POSIX shell, as git runs a merge driver through one. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/u.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The command line that runs this dreamd: node, then the `dreamd` executable of this package. */
function dreamdCommand(): string {
  // The package root is the folder of its package.json: src/cli/commands is three folders below it in a
  // checkout, dist/src/cli/commands four in the package, and the compiled source of a checkout more.
  const executable = path.join(packageRoot(), 'bin', 'dreamd.js');
  return `${shellWord(process.execPath)} ${shellWord(executable)}`;
}

/** `git merge-file` on three texts: the line merge of the text outside dreamd's block. */
function gitMergeFile(ours: string, base: string, theirs: string): { text: string; conflicts: boolean } {
  const folder = mkdtempSync(path.join(tmpdir(), 'dreamd-merge-'));
  try {
    const files = ['ours', 'base', 'theirs'].map((name) => path.join(folder, name));
    [ours, base, theirs].forEach((text, index) => writeFileSync(files[index]!, text));
    const result = spawnSync('git', ['merge-file', '-p', ...files], { encoding: 'utf8' });
    if (result.error !== undefined || result.status === null || result.status < 0)
      throw new Error(`git merge-file failed: ${result.error?.message ?? result.stderr}`);
    return { text: result.stdout, conflicts: result.status !== 0 };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

function readIfThere(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export const registerTeam: CommandRegistrar = (program, context) => {
  const team = program
    .command('team')
    .description(
      "memory shared with the team through the repository's AGENTS.md: setup, share, personal, merge",
    );
  registerSetup(team, context);
  registerMerge(team, context);
  registerMove(
    team,
    context,
    'share',
    "share a fact of this space with the team: the next run writes it into AGENTS.md's block",
    true,
  );
  registerMove(
    team,
    context,
    'personal',
    "keep a fact personal: the next run takes it out of AGENTS.md's block",
    false,
  );
};

/** `team setup`: the `.gitattributes` line and the merge driver in the repository's git config. */
function registerSetup(team: Command, context: () => CommandContext): void {
  team
    .command('setup')
    .description(
      "make git merge AGENTS.md fact by fact with dreamd's merge driver (.gitattributes and git config)",
    )
    .argument('[path]', 'the repository, or a folder inside it (default: the current folder)')
    .action((where: string | undefined) => {
      const { io, json } = context();
      const from = path.resolve(io.cwd, where ?? '.');
      const top = git(['rev-parse', '--show-toplevel'], from);
      if (!top.ok)
        throw new ConfigError(
          `${from} is not inside a git repository (${top.stderr.trim()}); run dreamd team setup inside the repository whose AGENTS.md the team shares`,
          'path',
        );
      const root = top.stdout.trim();
      const attributes = path.join(root, '.gitattributes');
      const before = readIfThere(attributes);
      const has = before
        ?.split(/\r?\n/u)
        .some((line) => line.trim().split(/\s+/u).join(' ') === GITATTRIBUTES_LINE);
      if (has !== true) {
        const eol = before?.includes('\r\n') === true ? '\r\n' : '\n';
        const lead = before === null || before === '' || before.endsWith('\n') ? '' : eol;
        writeFileSync(attributes, `${before ?? ''}${lead}${GITATTRIBUTES_LINE}${eol}`);
      }
      const driver = `${dreamdCommand()} team merge %O %A %B %P`;
      for (const [key, value] of [
        ['merge.dreamd.name', "dreamd: AGENTS.md's memory block, fact by fact"],
        ['merge.dreamd.driver', driver],
      ] as const) {
        const set = git(['config', key, value], root);
        if (!set.ok) throw new Error(`git config ${key} failed in ${root}: ${set.stderr.trim()}`);
      }
      emitResult(
        io,
        json,
        {
          command: 'team setup',
          data: { repository: root, gitattributes: attributes, added: has !== true, driver },
        },
        () =>
          [
            `${has === true ? 'kept' : 'added'} "${GITATTRIBUTES_LINE}" in ${attributes}${has === true ? '' : ' (commit it, so every clone merges the same way)'}`,
            `set merge.dreamd.driver in ${root}'s git config: ${driver}`,
            'each teammate runs dreamd team setup once in their clone (git config is not committed)',
          ].join('\n'),
      );
    });
}

/** `team merge`: the merge driver git runs for `AGENTS.md`. */
function registerMerge(team: Command, context: () => CommandContext): void {
  team
    .command('merge')
    .description(
      "the merge driver git runs for AGENTS.md (%O %A %B): dreamd's block fact by fact, the rest by git merge-file",
    )
    .argument('<base>', 'the common ancestor (%O)')
    .argument('<ours>', 'this side; the result is written here (%A)')
    .argument('<theirs>', 'the other side (%B)')
    .argument('[path]', 'the path in the repository (%P), for messages')
    .action(async (base: string, ours: string, theirs: string, where: string | undefined) => {
      const { io } = context();
      const { mergeAgentsFile } = await import('../../memory/agents-merge.js');
      const resolve = (file: string) => path.resolve(io.cwd, file);
      const merged = mergeAgentsFile(
        readIfThere(resolve(base)),
        readIfThere(resolve(ours)),
        readIfThere(resolve(theirs)),
        gitMergeFile,
      );
      writeFileSync(resolve(ours), merged.text);
      if (merged.conflicts) {
        io.stderr(
          `dreamd team merge: ${where ?? 'AGENTS.md'}: the text outside dreamd's block conflicts; dreamd's block merged, fix the rest by hand\n`,
        );
        throw new CommandExit(ExitCode.failure);
      }
    });
}

/** `team share` or `team personal`: a fact of the space's own memory moved to the team's block or out of it. */
function registerMove(
  team: Command,
  context: () => CommandContext,
  name: 'share' | 'personal',
  description: string,
  shared: boolean,
): void {
  withSpace(
    team
      .command(name)
      .description(description)
      .argument('<id>', 'fact id (f-…), as `dreamd memory show` lists them'),
    'space id, or a path inside its repository (required when several spaces are configured)',
  ).action(async (id: string, positional: string | undefined, _options: object, command: Command) => {
    const commandContext = context();
    const { io, json } = commandContext;
    const { spaceOf } = await import('../spaces.js');
    const space = await spaceOf(commandContext, namedSpace(command, positional));
    const { loadMemory } = await import('../../space/memory-dir.js');
    const { setSharing } = await import('../../space/team-memory.js');
    const { isTeamFact } = await import('../../memory/agents-block.js');
    const memory = await loadMemory(space.memoryDir, { agentsMd: space.agentsMd });
    const fact = memory.facts.find((candidate) => candidate.id === id);
    if (fact === undefined)
      throw new ConfigError(
        `no fact ${id} in space ${space.id}; dreamd memory show ${space.id} lists the ids`,
        'id',
      );
    if (isTeamFact(fact) || fact.owner === 'other')
      throw new ConfigError(
        `${id} is not this space's fact (${fact.file ?? 'another file'}): only a fact of your own memory moves; edit ${fact.file ?? 'the file'} by hand`,
        'id',
      );
    await setSharing(space.memoryDir, id, shared);
    const where = space.agentsMd ?? '(no agentsMd: set "agentsMd" on the space, or "discover.agentsMd")';
    emitResult(
      io,
      json,
      { command: `team ${name}`, data: { space: space.id, id, shared, agentsMd: space.agentsMd ?? null } },
      () =>
        `${id} "${fact.title}" is ${shared ? 'shared with the team' : 'personal'} in space ${space.id}; ` +
        `the next run (dreamd consolidate --force ${space.id}) ${shared ? 'writes it into' : 'takes it out of'} ${where}`,
    );
  });
}
