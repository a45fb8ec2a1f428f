import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claudeMemoryFolder,
  claudeProjectName,
  djb2,
  isClaudeProjectNameOf,
} from '../../src/discovery/index.js';

describe("Claude Code's name of a project folder", () => {
  it('turns every character but ASCII letters and digits into a dash, the leading slash included', () => {
    expect(claudeProjectName('/home/me/my_repo')).toBe('-home-me-my-repo');
    expect(claudeProjectName('/Users/me/proj/.worktrees/2573')).toBe('-Users-me-proj--worktrees-2573');
    expect(claudeProjectName('/tmp/café repo+1')).toBe('-tmp-caf--repo-1');
  });

  it('cuts a name past 200 characters and adds the base-36 djb2 hash of the whole path', () => {
    const long = `/home/me/${'deep/'.repeat(50)}repo`;
    const name = claudeProjectName(long);
    expect(name.startsWith(`${long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200)}-`)).toBe(true);
    expect(name).toBe(
      `${long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200)}-${Math.abs(djb2(long)).toString(36)}`,
    );
    expect(claudeProjectName(`${long}2`)).not.toBe(name);
  });

  it('computes djb2 as a signed 32-bit integer over UTF-16 code units', () => {
    expect(djb2('')).toBe(0);
    expect(djb2('a')).toBe(97);
    expect(djb2('ab')).toBe(97 * 31 + 98);
    expect(Number.isInteger(djb2('x'.repeat(1000)))).toBe(true);
    expect(Math.abs(djb2('x'.repeat(1000)))).toBeLessThan(2 ** 31 + 1);
  });

  it("recognises a long path's folder made by a build that hashes otherwise", () => {
    const long = `/srv/${'a'.repeat(250)}`;
    const cut = long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200);
    expect(isClaudeProjectNameOf(`${cut}-zz9`, long)).toBe(true);
    expect(isClaudeProjectNameOf('-srv-other', long)).toBe(false);
    expect(isClaudeProjectNameOf('-home-me-repo', '/home/me/repo')).toBe(true);
    expect(isClaudeProjectNameOf('-home-me-repo-bak', '/home/me/repo')).toBe(false);
  });

  it("puts memory in the root's project folder, taking a long root's folder already on disk", () => {
    expect(claudeMemoryFolder('/h/projects', '/home/me/repo', [])).toBe(
      join('/h/projects', '-home-me-repo', 'memory'),
    );
    const long = `/srv/${'a'.repeat(250)}`;
    const cut = long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200);
    expect(claudeMemoryFolder('/h/projects', long, [])).toBe(
      join('/h/projects', claudeProjectName(long), 'memory'),
    );
    expect(claudeMemoryFolder('/h/projects', long, [`${cut}-native1`])).toBe(
      join('/h/projects', `${cut}-native1`, 'memory'),
    );
  });
});
