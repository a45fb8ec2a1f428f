import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { claudeProjectName } from '../../src/discovery/index.js';
import { useTempDir } from '../support/fixtures.js';
import { CLAUDE_CODE_FIXTURES, CODEX_FIXTURES } from '../transcripts/helpers.js';

/**
 * A developer's machine in a temp folder, built from the real transcript fixtures: git repositories (made by
 * git itself, linked worktrees included), Claude Code's home with a project folder per working directory, and
 * Codex's home with rollouts in its dated folders. Each transcript is the fixture with its working directory
 * moved to the folder given (every other byte of every line as published).
 */

/** The folders of a machine for one test; see useMachine. */
export interface Machine {
  /** The test's temp folder, by its real path (git and the agents name folders by theirs). */
  readonly root: string;
  /** Claude Code's home, `root/home/.claude` (not created). */
  readonly claudeHome: string;
  /** Codex's home, `root/home/.codex` (not created). */
  readonly codexHome: string;
  /** The environment that points dreamd at both homes. */
  readonly env: Record<string, string>;
}

/** A machine for each test of the file (or describe), in a fresh temp folder removed after the test. */
export function useMachine(prefix: string): Machine {
  const folder = useTempDir(prefix);
  const root = (): string => realpathSync(folder.path);
  return {
    get root() {
      return root();
    },
    get claudeHome() {
      return join(root(), 'home', '.claude');
    },
    get codexHome() {
      return join(root(), 'home', '.codex');
    },
    get env() {
      return { CLAUDE_CONFIG_DIR: this.claudeHome, CODEX_HOME: this.codexHome };
    },
  };
}

export const LONG_AGO = new Date('2025-12-01T00:00:00Z');

export function git(cwd: string, ...args: string[]): void {
  execFileSync(
    'git',
    [
      '-c',
      'user.name=test',
      '-c',
      'user.email=test@example.invalid',
      '-c',
      'init.defaultBranch=main',
      ...args,
    ],
    {
      cwd,
      stdio: 'ignore',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    },
  );
}

/** A repository with one empty commit (a linked worktree needs one). */
export function makeRepository(path: string): string {
  mkdirSync(path, { recursive: true });
  git(path, 'init', '--quiet');
  git(path, 'commit', '--quiet', '--allow-empty', '-m', 'start');
  return path;
}

/** A linked worktree of `repository` at `path`. */
export function addWorktree(repository: string, path: string, branch: string): string {
  git(repository, 'worktree', 'add', '--quiet', '-b', branch, path);
  return path;
}

/** The fixture's lines with every working directory (`cwd`, Codex's `session_meta.payload.cwd`) set to `cwd`. */
export function withWorkingDirectory(text: string, cwd: string): string {
  return text
    .split('\n')
    .map((line) => {
      if (!line.includes('"cwd"')) return line;
      const record = JSON.parse(line) as Record<string, unknown>;
      if (typeof record.cwd === 'string') record.cwd = cwd;
      const payload = record.payload as Record<string, unknown> | undefined;
      if (record.type === 'session_meta' && payload !== undefined) payload.cwd = cwd;
      return JSON.stringify(record);
    })
    .join('\n');
}

/** Places a Claude Code fixture as a session Claude Code ran in `cwd`; returns its path. */
export function placeClaudeSession(claudeHome: string, cwd: string, fixture: string, name?: string): string {
  return placeClaudeSessionIn(join(claudeHome, 'projects', claudeProjectName(cwd)), cwd, fixture, name);
}

/**
 * Places a Claude Code fixture that ran in `cwd` in the project folder `folder`, whatever its name (a native
 * build's long name, a copied transcript); returns its path.
 */
export function placeClaudeSessionIn(folder: string, cwd: string, fixture: string, name?: string): string {
  mkdirSync(folder, { recursive: true });
  const text = readFileSync(join(CLAUDE_CODE_FIXTURES, fixture), 'utf8');
  const sessionId = /"sessionId":"([^"]+)"/.exec(text)?.[1] ?? 'session';
  const path = join(folder, `${name ?? sessionId}.jsonl`);
  writeFileSync(path, withWorkingDirectory(text, cwd));
  utimesSync(path, LONG_AGO, LONG_AGO);
  return path;
}

/** Places a Codex fixture as a rollout Codex ran in `cwd`, under `sessions/<day>/`; returns its path. */
export function placeCodexRollout(
  codexHome: string,
  cwd: string,
  fixture: string,
  day: string,
  file: string,
): string {
  const folder = join(codexHome, 'sessions', ...day.split('/'));
  mkdirSync(folder, { recursive: true });
  const path = join(folder, file);
  writeFileSync(path, withWorkingDirectory(readFileSync(join(CODEX_FIXTURES, fixture), 'utf8'), cwd));
  utimesSync(path, LONG_AGO, LONG_AGO);
  return path;
}

/** sha256 and mtime of every file under `folder` (skipping `skip` folders by name), by path. */
export function fingerprint(folder: string, skip: ReadonlySet<string> = new Set()): Map<string, string> {
  const prints = new Map<string, string>();
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) {
        if (!skip.has(entry.name)) walk(path);
      } else if (entry.isFile()) {
        const hash = createHash('sha256').update(readFileSync(path)).digest('hex');
        prints.set(path, `${hash} ${statSync(path).mtimeMs}`);
      }
    }
  };
  walk(folder);
  return prints;
}
