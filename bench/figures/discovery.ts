/**
 * Figure 14: discovery's cost over a large home. Claude Code's `projects/` holds `projectFolders` folders (each
 * a working directory: a repository's root or one of its subfolders, a fifth of the repositories also with a
 * linked worktree) and Codex's `sessions/` holds `rollouts` rollouts in dated folders, spread over the same
 * repositories. Timed: the first pass (every transcript's head read once), then passes with the cache a
 * daemon keeps (listing only), which is what every scheduler tick pays.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DiscoverSettings } from '../../src/config/schema.js';
import {
  claudeProjectName,
  createDiscoveryCache,
  discoverRepositories,
  spacesOfDiscovery,
  type Discovery,
} from '../../src/discovery/index.js';
import type { Figure } from '../report.js';
import { makeTempRoot } from '../setup.js';
import { median, timeMs } from '../stats.js';

export interface DiscoveryOptions {
  /** Claude Code project folders (working directories). */
  readonly projectFolders: number;
  /** Codex rollouts. */
  readonly rollouts: number;
  readonly log: (line: string) => void;
}

/** Working directories per repository: its root and four subfolders. */
const FOLDERS_PER_REPOSITORY = 5;
const CLAUDE_SESSIONS_PER_FOLDER = 2;
const WARM_PASSES = 10;

function claudeLine(cwd: string, sessionId: string): string {
  return `${JSON.stringify({ type: 'summary', summary: 'Work on the project', leafUuid: sessionId })}\n${JSON.stringify(
    {
      type: 'user',
      cwd,
      sessionId,
      message: { role: 'user', content: 'Please run the tests and fix what fails.' },
      uuid: `${sessionId}-1`,
      timestamp: '2025-11-22T20:45:35.610Z',
    },
  )}\n`;
}

function rolloutLines(cwd: string, id: string): string {
  return `${JSON.stringify({
    timestamp: '2025-11-22T20:45:35.610Z',
    type: 'session_meta',
    payload: {
      id,
      timestamp: '2025-11-22T20:45:35.590Z',
      cwd,
      originator: 'codex_cli_rs',
      cli_version: '0.60.1',
    },
  })}\n${JSON.stringify({
    timestamp: '2025-11-22T20:45:36.000Z',
    type: 'response_item',
    payload: {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Add a test for the parser.' }],
    },
  })}\n`;
}

/** Lays the home out; returns the settings and what discovery must find. */
export function writeHome(root: string, options: DiscoveryOptions) {
  const repositories = Math.ceil(options.projectFolders / FOLDERS_PER_REPOSITORY);
  const claudeHome = join(root, '.claude');
  const codexHome = join(root, '.codex');
  const folders: string[] = [];
  for (let index = 0; index < repositories; index += 1) {
    const repository = join(root, 'code', `repo-${String(index).padStart(5, '0')}`);
    mkdirSync(join(repository, '.git'), { recursive: true });
    folders.push(repository);
    for (let sub = 1; sub < FOLDERS_PER_REPOSITORY; sub += 1) {
      const folder = join(repository, `part-${sub}`);
      mkdirSync(folder, { recursive: true });
      folders.push(folder);
    }
    if (index % 5 === 0) {
      // A linked worktree as git writes it: `.git` file → its git dir → `commondir` back to the main `.git`,
      // and the git dir's `gitdir` file back to the worktree's `.git` (the back-link discovery checks).
      const worktree = join(root, 'code', `repo-${String(index).padStart(5, '0')}-wt`);
      const gitDir = join(repository, '.git', 'worktrees', 'wt');
      mkdirSync(gitDir, { recursive: true });
      mkdirSync(worktree, { recursive: true });
      writeFileSync(join(gitDir, 'commondir'), '../..\n');
      writeFileSync(join(gitDir, 'gitdir'), `${join(worktree, '.git')}\n`);
      writeFileSync(join(worktree, '.git'), `gitdir: ${gitDir}\n`);
      folders[folders.length - 1] = worktree; // its last subfolder's place goes to the worktree
    }
  }
  const used = folders.slice(0, options.projectFolders);
  for (const [index, cwd] of used.entries()) {
    const folder = join(claudeHome, 'projects', claudeProjectName(cwd));
    mkdirSync(folder, { recursive: true });
    for (let session = 0; session < CLAUDE_SESSIONS_PER_FOLDER; session += 1) {
      const id = `00000000-0000-4000-8000-${String(index * 10 + session).padStart(12, '0')}`;
      writeFileSync(join(folder, `${id}.jsonl`), claudeLine(cwd, id));
    }
  }
  for (let index = 0; index < options.rollouts; index += 1) {
    const day = join(
      '2025',
      String((index % 12) + 1).padStart(2, '0'),
      String((index % 28) + 1).padStart(2, '0'),
    );
    const folder = join(codexHome, 'sessions', day);
    if (index < 12 * 28) mkdirSync(folder, { recursive: true });
    const id = `019a0000-0000-7000-8000-${String(index).padStart(12, '0')}`;
    writeFileSync(
      join(folder, `rollout-2025-11-22T20-45-35-${id}.jsonl`),
      rolloutLines(used[index % used.length]!, id),
    );
  }
  const settings: DiscoverSettings = {
    agents: ['claude-code', 'codex'],
    agentsMd: false,
    claudeHome,
    codexHome,
  };
  return { settings, repositories };
}

/** Fails loudly when discovery did not see the whole home: a figure over less input would flatter it. */
function checkFound(found: Discovery, repositories: number, options: DiscoveryOptions): void {
  const sessions = found.repositories.reduce(
    (sum, repository) => sum + repository.sources.reduce((inner, source) => inner + source.sessions, 0),
    0,
  );
  const expected = options.projectFolders * CLAUDE_SESSIONS_PER_FOLDER + options.rollouts;
  if (found.repositories.length !== repositories || sessions !== expected || found.skipped.length > 0) {
    throw new Error(
      `discovery found ${found.repositories.length} repositories and ${sessions} sessions, not ${repositories} and ` +
        `${expected} (${found.skipped.length} skipped: ${found.skipped[0]?.message ?? ''}); the figure's input is incomplete`,
    );
  }
}

export async function measureDiscovery(options: DiscoveryOptions): Promise<Figure[]> {
  const root = await makeTempRoot('discovery');
  try {
    options.log(
      `  writing ${options.projectFolders.toLocaleString('en')} project folders and ${options.rollouts.toLocaleString('en')} rollouts`,
    );
    const { settings, repositories } = writeHome(root.path, options);
    const cache = createDiscoveryCache();
    let found: Discovery | undefined;
    const coldMs = await timeMs(async () => {
      found = await discoverRepositories({ settings, cache });
    });
    checkFound(found!, repositories, options);
    options.log(`  first pass ${Math.round(coldMs)} ms; ${WARM_PASSES} passes with the cache`);
    await discoverRepositories({ settings, cache }); // untimed: the first pass's garbage is collected here
    const warm: number[] = [];
    for (let pass = 0; pass < WARM_PASSES; pass += 1) {
      warm.push(
        await timeMs(async () => {
          found = await discoverRepositories({ settings, cache });
          spacesOfDiscovery(found, settings, []);
        }),
      );
      checkFound(found!, repositories, options);
    }
    const warmMs = median(warm);
    const scale = `${options.projectFolders.toLocaleString('en')} project folders, ${options.rollouts.toLocaleString('en')} rollouts`;
    const details = {
      repositories,
      'first pass (ms)': Math.round(coldMs),
      'passes with the cache (ms)': warm.map((ms) => Math.round(ms)),
    };
    return [
      {
        key: 'discovery-warm',
        name: `discovery, every tick (${scale})`,
        value: warmMs,
        unit: 'ms',
        target: 'reported',
        ratio: undefined,
        ratioOf: '',
        met: undefined,
        details,
      },
      {
        key: 'discovery-cold',
        name: `discovery, first pass: every transcript's head read (${scale})`,
        value: coldMs,
        unit: 'ms',
        target: 'reported',
        ratio: undefined,
        ratioOf: '',
        met: undefined,
      },
    ];
  } finally {
    await root.remove();
  }
}
