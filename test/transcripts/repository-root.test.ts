import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRepositoryResolver, repositoryOf } from '../../src/transcripts/index.js';
import { addWorktree, makeRepository } from '../discovery/agent-home.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

const temp = (): string => realpathSync(tempDirRemovedAfterTest('repo-root'));

describe('the repository of a working directory', () => {
  it('is the folder holding .git, from the folder itself or any folder below it', () => {
    const root = makeRepository(join(temp(), 'shop'));
    mkdirSync(join(root, 'server', 'api'), { recursive: true });
    expect(repositoryOf(root)).toEqual({ kind: 'repository', root });
    expect(repositoryOf(join(root, 'server', 'api'))).toEqual({ kind: 'repository', root });
  });

  it("is the main worktree's root for a linked worktree, read from .git's gitdir and commondir", () => {
    const base = temp();
    const root = makeRepository(join(base, 'shop'));
    const worktree = addWorktree(root, join(base, 'shop-fix'), 'fix');
    mkdirSync(join(worktree, 'docs'));
    expect(repositoryOf(worktree)).toEqual({ kind: 'repository', root, worktree });
    expect(repositoryOf(join(worktree, 'docs'))).toEqual({ kind: 'repository', root, worktree });
  });

  it('is the folder of a .git file without commondir (a submodule), and of a .git file it cannot follow', () => {
    const base = temp();
    mkdirSync(join(base, 'module', '.gitdir-elsewhere'), { recursive: true });
    writeFileSync(join(base, 'module', '.git'), 'gitdir: .gitdir-elsewhere\n');
    expect(repositoryOf(join(base, 'module'))).toEqual({ kind: 'repository', root: join(base, 'module') });
    mkdirSync(join(base, 'odd'));
    writeFileSync(join(base, 'odd', '.git'), 'not a pointer');
    expect(repositoryOf(join(base, 'odd'))).toEqual({ kind: 'repository', root: join(base, 'odd') });
  });

  it('is the nearest repository for a repository nested in another', () => {
    const outer = makeRepository(join(temp(), 'outer'));
    const inner = makeRepository(join(outer, 'vendor', 'inner'));
    expect(repositoryOf(join(inner))).toEqual({ kind: 'repository', root: inner });
    expect(repositoryOf(join(outer, 'vendor'))).toEqual({ kind: 'repository', root: outer });
  });

  it('is the folder itself outside git, and vanished for a folder that no longer exists', () => {
    const base = temp();
    mkdirSync(join(base, 'notes'));
    expect(repositoryOf(join(base, 'notes'))).toEqual({ kind: 'folder', root: join(base, 'notes') });
    rmSync(join(base, 'notes'), { recursive: true });
    expect(repositoryOf(join(base, 'notes'))).toMatchObject({
      kind: 'vanished',
      detail: expect.stringContaining('no longer exists'),
    });
    writeFileSync(join(base, 'file'), '');
    expect(repositoryOf(join(base, 'file'))).toMatchObject({
      kind: 'vanished',
      detail: expect.stringContaining('not a folder'),
    });
  });

  it('answers a folder once per resolver', () => {
    const root = makeRepository(join(temp(), 'shop'));
    const resolve = createRepositoryResolver();
    expect(resolve(root)).toEqual({ kind: 'repository', root });
    rmSync(join(root, '.git'), { recursive: true });
    expect(resolve(root)).toEqual({ kind: 'repository', root });
    expect(repositoryOf(root).kind).toBe('folder');
  });
});
