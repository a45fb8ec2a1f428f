import type { DiscoveredSpaces } from '../../discovery/index.js';
import type { CommandRegistrar } from '../program.js';
import { emitResult } from '../output.js';
import { counted } from '../../util/plural.js';

/** One repository of `dreamd discover --json`. */
export interface DiscoverRow {
  readonly root: string;
  readonly kind: 'repository' | 'folder';
  /** The space that consolidates it, or null when `leftOut` says why none does. */
  readonly space: string | null;
  readonly memory: string;
  readonly worktrees: readonly string[];
  readonly sources: readonly {
    readonly agent: string;
    readonly folder: string;
    readonly sessions: number;
    readonly workingDirectories: readonly string[];
  }[];
  readonly leftOut: string | null;
}

/** What `dreamd discover --json` prints as `data`. */
export interface DiscoverOutput {
  readonly homes: readonly { readonly agent: string; readonly path: string; readonly found: boolean }[];
  readonly repositories: readonly DiscoverRow[];
  readonly skipped: readonly { readonly path: string; readonly reason: string; readonly message: string }[];
  /** Claude Code folders several repositories' paths encode to; nothing is written there without an owner. */
  readonly collisions: readonly {
    readonly folder: string;
    readonly repositories: readonly string[];
    readonly owner: string | null;
    readonly message: string;
  }[];
  readonly notes: readonly string[];
}

export function discoverOutput(found: DiscoveredSpaces): DiscoverOutput {
  return {
    homes: found.discovery.homes.map((home) => ({
      agent: home.agent,
      path: home.path,
      found: home.found,
      ...(home.linkedTo === undefined ? {} : { linkedTo: home.linkedTo }),
    })),
    repositories: found.spaces.map((entry) => ({
      root: entry.repository.root,
      kind: entry.repository.kind,
      space: entry.space?.id ?? null,
      memory: entry.memoryDir,
      worktrees: entry.repository.worktrees,
      sources: entry.repository.sources.map((source) => ({
        agent: source.agent,
        folder: source.sessionsDir,
        sessions: source.sessions,
        workingDirectories: source.workingDirectories,
      })),
      leftOut: entry.leftOut ?? null,
    })),
    skipped: found.discovery.skipped.map(({ path, reason, message }) => ({ path, reason, message })),
    collisions: found.collisions.map(({ folder, repositories, owner, message }) => ({
      folder,
      repositories,
      owner,
      message,
    })),
    notes: found.notes,
  };
}

function describe(output: DiscoverOutput): string {
  const lines: string[] = [];
  for (const home of output.homes) {
    lines.push(`${home.agent} home: ${home.path}${home.found ? '' : ' (no sessions folder)'}`);
  }
  if (output.repositories.length === 0) lines.push('no repository found');
  for (const repository of output.repositories) {
    lines.push('', `${repository.root}${repository.kind === 'folder' ? ' (not a git repository)' : ''}`);
    lines.push(
      repository.space === null
        ? `  not consolidated by discovery: ${repository.leftOut ?? ''}`
        : `  space ${repository.space} → ${repository.memory}`,
    );
    for (const worktree of repository.worktrees) lines.push(`  worktree ${worktree}`);
    for (const source of repository.sources) {
      lines.push(`  ${source.agent}: ${counted(source.sessions, 'session')} in ${source.folder}`);
    }
  }
  if (output.skipped.length > 0) {
    lines.push('', `skipped (${output.skipped.length}):`);
    for (const skip of output.skipped) lines.push(`  ${skip.message}`);
  }
  for (const collision of output.collisions) lines.push('', `collision: ${collision.message}`);
  for (const note of output.notes) lines.push('', `note: ${note}`);
  return lines.join('\n');
}

export const registerDiscover: CommandRegistrar = (program, context) => {
  program
    .command('discover')
    .description(
      'the repositories the coding agents worked in: their sessions, the memory folder each feeds, what was skipped',
    )
    .action(async () => {
      const { io, json, config } = context();
      const loaded = config();
      const { discoverSpaces } = await import('../../discovery/index.js');
      if (loaded.discover === undefined && !json) {
        io.stderr(
          'dreamd: no "discover" in the config: add "discover": ["claude-code", "codex"] to find repositories\n',
        );
      }
      const output = discoverOutput(await discoverSpaces(loaded));
      emitResult(io, json, { command: 'discover', data: output }, () => describe(output));
    });
};
