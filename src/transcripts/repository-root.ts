import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errorMessage } from '../errors.js';

/**
 * The repository a working directory belongs to, found as git finds it and without running git: the nearest
 * folder at or above it that holds `.git`. A `.git` folder makes that folder the root. A `.git` file
 * (`gitdir: <path>`) is a linked worktree when its git dir has a `commondir` and git's back-link: the git dir
 * is `<common dir>/worktrees/<name>/` and its `gitdir` file names this very `.git` file, as `git worktree add`
 * writes them. Then the common dir's parent (the main worktree, which holds the `.git` folder) is the root, as
 * Claude Code keeps one memory for every worktree of a repository. A `.git` file without `commondir` (a
 * submodule, `--separate-git-dir`) makes its own folder the root, and so does one without the back-link (a
 * copied or forged file: `unlinkedGitDir` names where it pointed). Outside git the folder itself is its own
 * root.
 */
export type RepositoryOf =
  | {
      readonly kind: 'repository';
      readonly root: string;
      /** The linked worktree the folder is in, when it is not the main one. */
      readonly worktree?: string | undefined;
      /** The common git dir a `.git` file pointed into without git's back-link to it (the root is its own). */
      readonly unlinkedGitDir?: string | undefined;
    }
  | { readonly kind: 'folder'; readonly root: string }
  | { readonly kind: 'vanished'; readonly detail: string };

function isMissing(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    (error.code === 'ENOENT' || error.code === 'ENOTDIR')
  );
}

/** The root a `.git` file leads to: the main worktree of a linked worktree, else the file's own folder. */
function rootOfGitFile(folder: string, gitFile: string): RepositoryOf {
  let text: string;
  try {
    text = readFileSync(gitFile, 'utf8');
  } catch {
    return { kind: 'repository', root: folder };
  }
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (match === null) return { kind: 'repository', root: folder };
  const gitDir = resolve(folder, match[1]!);
  let common: string;
  try {
    common = readFileSync(join(gitDir, 'commondir'), 'utf8').trim();
  } catch {
    return { kind: 'repository', root: folder };
  }
  const commonDir = resolve(gitDir, common);
  // A common dir named `.git` sits in the main worktree; any other (a bare repository) has none to point at.
  if (basename(commonDir) !== '.git') return { kind: 'repository', root: folder };
  if (!linksBack(gitDir, commonDir, gitFile)) {
    return { kind: 'repository', root: folder, unlinkedGitDir: commonDir };
  }
  return { kind: 'repository', root: dirname(commonDir), worktree: folder };
}

/**
 * Git's back-link of a linked worktree: its git dir is `<common dir>/worktrees/<name>` and holds a `gitdir`
 * file naming the worktree's `.git` file. Compared as real paths, so a worktree reached through a symbolic link
 * (`/tmp` → `/private/tmp`) still counts.
 */
function linksBack(gitDir: string, commonDir: string, gitFile: string): boolean {
  if (realOrSelf(dirname(gitDir)) !== realOrSelf(join(commonDir, 'worktrees'))) return false;
  let named: string;
  try {
    named = readFileSync(join(gitDir, 'gitdir'), 'utf8').trim();
  } catch {
    return false;
  }
  return named !== '' && realOrSelf(resolve(gitDir, named)) === realOrSelf(gitFile);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Resolves a working directory (absolute) to its repository. Never throws. */
export function repositoryOf(cwd: string): RepositoryOf {
  const start = resolve(cwd);
  try {
    if (!statSync(start).isDirectory()) return { kind: 'vanished', detail: `${start} is not a folder` };
  } catch (error) {
    return {
      kind: 'vanished',
      detail: isMissing(error)
        ? `${start} no longer exists`
        : `${start} cannot be read (${errorMessage(error)})`,
    };
  }
  for (let folder = start; ; folder = dirname(folder)) {
    const gitPath = join(folder, '.git');
    try {
      const stats = lstatSync(gitPath);
      if (stats.isDirectory()) return { kind: 'repository', root: folder };
      if (stats.isFile()) return rootOfGitFile(folder, gitPath);
    } catch {
      // No `.git` here (or not one we may read): look in the parent.
    }
    if (dirname(folder) === folder) return { kind: 'folder', root: start };
  }
}

/** `repositoryOf` with its answers kept per folder, for one pass over many transcripts of few folders. */
export function createRepositoryResolver(): (cwd: string) => RepositoryOf {
  const known = new Map<string, RepositoryOf>();
  return (cwd) => {
    let found = known.get(cwd);
    if (found === undefined) {
      found = repositoryOf(cwd);
      known.set(cwd, found);
    }
    return found;
  };
}
