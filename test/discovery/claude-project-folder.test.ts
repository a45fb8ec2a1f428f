import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claudeMemoryFolder,
  claudeNativeProjectName,
  claudeProjectName,
  claudeProjectNames,
  djb2,
  isClaudeProjectNameOf,
  wyhash,
} from '../../src/discovery/index.js';

describe("Claude Code's name of a project folder", () => {
  it.each([
    ['/home/me/my_repo', '-home-me-my-repo'],
    ['/Users/me/proj/.worktrees/2573', '-Users-me-proj--worktrees-2573'],
    ['/tmp/café repo+1', '-tmp-caf--repo-1'],
  ])(
    'names %s %s: every character but ASCII letters and digits a dash, the leading slash included',
    (path, name) => {
      expect(claudeProjectName(path)).toBe(name);
    },
  );

  it('cuts a name past 200 characters and adds the base-36 djb2 hash of the whole path', () => {
    const long = `/home/me/${'deep/'.repeat(50)}repo`;
    const name = claudeProjectName(long);
    expect(name.startsWith(`${long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200)}-`)).toBe(true);
    expect(name).toBe(
      `${long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200)}-${Math.abs(djb2(long)).toString(36)}`,
    );
    expect(claudeProjectName(`${long}2`)).not.toBe(name);
  });

  it.each([
    ['', 0],
    ['a', 97],
    ['ab', 97 * 31 + 98],
  ])('computes djb2 of %j as %i', (text, hash) => {
    expect(djb2(text)).toBe(hash);
  });

  it('computes djb2 as a signed 32-bit integer over UTF-16 code units', () => {
    expect(Number.isInteger(djb2('x'.repeat(1000)))).toBe(true);
    expect(Math.abs(djb2('x'.repeat(1000)))).toBeLessThan(2 ** 31 + 1);
  });

  it("computes Bun.hash (Zig's wyhash) as Claude Code's native build does, on Zig's vectors and Bun's documented ones", () => {
    // Zig's std.hash.Wyhash test vectors (seed, expected, input): the short, 17–47 and past-48-byte paths.
    const vectors: [bigint, bigint, string][] = [
      [0n, 0x409638ee2bde459n, ''],
      [1n, 0xa8412d091b5fe0a9n, 'a'],
      [2n, 0x32dd92e4b2915153n, 'abc'],
      [3n, 0x8619124089a3a16bn, 'message digest'],
      [4n, 0x7a43afb61d7f5f40n, 'abcdefghijklmnopqrstuvwxyz'],
      [5n, 0xff42329b90e50d58n, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'],
      [6n, 0xc39cab13b115aad3n, '1234567890'.repeat(8)],
    ];
    for (const [seed, expected, input] of vectors) expect(wyhash(input, seed)).toBe(expected);
    // Bun's documentation of Bun.hash.
    expect(wyhash('some data here')).toBe(11562320457524636935n);
    expect(wyhash('some data here', 1234n)).toBe(15724820720172937558n);
  });

  it("knows a long path's two exact names, and no other folder that shares the cut name", () => {
    const long = `/srv/${'a'.repeat(250)}`;
    const cut = long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200);
    expect(claudeNativeProjectName(long)).toBe(`${cut}-${wyhash(long).toString(36)}`);
    expect(claudeProjectNames(long)).toEqual([claudeProjectName(long), claudeNativeProjectName(long)]);
    expect(isClaudeProjectNameOf(claudeProjectName(long), long)).toBe(true);
    expect(isClaudeProjectNameOf(claudeNativeProjectName(long), long)).toBe(true);
    expect(isClaudeProjectNameOf(`${cut}-zz9`, long)).toBe(false);
    expect(isClaudeProjectNameOf(claudeProjectName(`${long}b`), long)).toBe(false);
    expect(isClaudeProjectNameOf('-srv-other', long)).toBe(false);
    expect(claudeProjectNames('/home/me/repo')).toEqual(['-home-me-repo']);
    expect(isClaudeProjectNameOf('-home-me-repo', '/home/me/repo')).toBe(true);
    expect(isClaudeProjectNameOf('-home-me-repo-bak', '/home/me/repo')).toBe(false);
  });

  it("puts memory in the root's project folder, the native build's when only it is on disk", () => {
    expect(claudeMemoryFolder('/h/projects', '/home/me/repo', [])).toBe(
      join('/h/projects', '-home-me-repo', 'memory'),
    );
    const long = `/srv/${'a'.repeat(250)}`;
    const cut = long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200);
    const npm = claudeProjectName(long);
    const native = claudeNativeProjectName(long);
    expect(claudeMemoryFolder('/h/projects', long, [])).toBe(join('/h/projects', npm, 'memory'));
    expect(claudeMemoryFolder('/h/projects', long, [native])).toBe(join('/h/projects', native, 'memory'));
    expect(claudeMemoryFolder('/h/projects', long, [native, npm])).toBe(join('/h/projects', npm, 'memory'));
    // Another long path's folder under the same cut name is never taken.
    expect(claudeMemoryFolder('/h/projects', long, [`${cut}-native1`])).toBe(
      join('/h/projects', npm, 'memory'),
    );
  });
});
