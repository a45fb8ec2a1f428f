import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DiscoverSettings, Space } from '../../src/config/schema.js';
import {
  claudeProjectName,
  createDiscoveryCache,
  discoverRepositories,
  spacesOfDiscovery,
} from '../../src/discovery/index.js';
import { CODEX_FIXTURE, FIXTURE } from '../transcripts/helpers.js';
import { makeRepository, placeClaudeSession, placeCodexRollout } from './agent-home.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

/** Each bad input is named with its fix, and none stops the repositories around it from being found. */

function home() {
  const root = realpathSync(tempDirRemovedAfterTest('discover-bad'));
  const settings: DiscoverSettings = {
    agents: ['claude-code', 'codex'],
    agentsMd: false,
    claudeHome: join(root, '.claude'),
    codexHome: join(root, '.codex'),
  };
  mkdirSync(join(settings.claudeHome, 'projects'), { recursive: true });
  mkdirSync(join(settings.codexHome, 'sessions'), { recursive: true });
  const good = makeRepository(join(root, 'code', 'good'));
  placeClaudeSession(settings.claudeHome, good, FIXTURE.helloWorld);
  return { root, settings, good };
}

describe('discovery over bad input', () => {
  it('names a transcript without a working directory and still finds the rest', async () => {
    const { settings, good } = home();
    const folder = join(settings.claudeHome, 'projects', '-somewhere');
    mkdirSync(folder);
    writeFileSync(join(folder, 'a.jsonl'), '{"type":"summary","summary":"no cwd here"}\n');
    placeCodexRollout(settings.codexHome, good, CODEX_FIXTURE.tail, '2025/11/23', 'rollout-tail.jsonl');
    const found = await discoverRepositories({ settings });
    expect(found.repositories.map((repository) => repository.root)).toEqual([good]);
    expect(found.skipped.map((skip) => [skip.path, skip.reason])).toEqual([
      [folder, 'no-working-directory'],
      [
        join(settings.codexHome, 'sessions', '2025', '11', '23', 'rollout-tail.jsonl'),
        'no-working-directory',
      ],
    ]);
    expect(found.skipped[0]?.message).toContain('add a space for this folder by hand');
  });

  it('reports a working directory that no longer exists and merges its sessions nowhere', async () => {
    const { root, settings, good } = home();
    const gone = makeRepository(join(root, 'code', 'gone'));
    placeClaudeSession(settings.claudeHome, gone, FIXTURE.summaryTask);
    placeCodexRollout(
      settings.codexHome,
      join(gone, 'sub'),
      CODEX_FIXTURE.head,
      '2025/11/22',
      'rollout-a.jsonl',
    );
    rmSync(gone, { recursive: true });
    const found = await discoverRepositories({ settings });
    expect(found.repositories.map((repository) => repository.root)).toEqual([good]);
    expect(found.repositories[0]?.sources).toHaveLength(1);
    expect(found.skipped.map((skip) => skip.reason)).toEqual(['vanished', 'vanished']);
    expect(found.skipped[0]?.message).toContain('not merged into any other repository');
    expect(found.skipped[0]?.message).toContain('restore the folder');
  });

  it("leaves a person's files and a copied project folder alone, each named", async () => {
    const { settings, good } = home();
    const project = join(settings.claudeHome, 'projects', claudeProjectName(good));
    writeFileSync(join(project, 'notes.md'), '# my notes\n');
    writeFileSync(join(settings.claudeHome, 'projects', 'todo.txt'), 'buy milk\n');
    const copy = join(settings.claudeHome, 'projects', `${claudeProjectName(good)}-backup`);
    mkdirSync(copy);
    placeClaudeSession(settings.claudeHome, good, FIXTURE.helloWorld);
    symlinkSync(join(project, 'de3b8b19-5bc0-4a2a-934a-1b6806567e25.jsonl'), join(copy, 'x.jsonl'));
    symlinkSync(project, join(settings.claudeHome, 'projects', '-linked'));
    const found = await discoverRepositories({ settings });
    expect(found.repositories.map((repository) => [repository.root, repository.sources.length])).toEqual([
      [good, 1],
    ]);
    const reasons = new Map(found.skipped.map((skip) => [skip.path, skip]));
    expect(reasons.get(join(project, 'notes.md'))?.reason).toBe('not-a-transcript');
    expect(reasons.get(join(settings.claudeHome, 'projects', 'todo.txt'))?.reason).toBe('not-a-transcript');
    expect(reasons.get(copy)).toMatchObject({
      reason: 'renamed-folder',
      message: expect.stringContaining('rename it back'),
    });
    expect(reasons.get(join(settings.claudeHome, 'projects', '-linked'))?.message).toContain('symbolic link');
  });

  it('follows a symlinked home and names a home whose link leads nowhere', async () => {
    const { root, settings, good } = home();
    const linked = join(root, 'linked-claude');
    symlinkSync(settings.claudeHome, linked);
    const found = await discoverRepositories({ settings: { ...settings, claudeHome: linked } });
    expect(found.repositories.map((repository) => repository.root)).toEqual([good]);
    expect(found.homes[0]).toMatchObject({
      agent: 'claude-code',
      found: true,
      linkedTo: settings.claudeHome,
    });
    const dangling = join(root, 'dangling');
    symlinkSync(join(root, 'nowhere'), dangling);
    const broken = await discoverRepositories({ settings: { ...settings, claudeHome: dangling } });
    expect(broken.repositories).toEqual([]);
    expect(broken.skipped[0]).toMatchObject({
      reason: 'home-missing',
      message: expect.stringContaining('leads nowhere'),
    });
  });

  it('keeps a repository nested in another apart, with a note, and leaves to a configured space the memory it writes', async () => {
    const { root, settings, good } = home();
    const inner = makeRepository(join(good, 'vendor', 'inner'));
    placeClaudeSession(settings.claudeHome, inner, FIXTURE.summaryTask);
    const found = await discoverRepositories({ settings });
    expect(found.repositories.map((repository) => repository.root)).toEqual([good, inner]);
    const configured: Space = {
      id: 'mine',
      sessionsDir: join(root, 'sessions'),
      memoryDir: join(settings.claudeHome, 'projects', claudeProjectName(inner), 'memory'),
      format: 'native',
    };
    const spaces = spacesOfDiscovery(found, settings, [configured]);
    expect(spaces.spaces.map((entry) => entry.space?.repository ?? entry.leftOut)).toEqual([
      good,
      expect.stringContaining('the configured space "mine" already writes'),
    ]);
    expect(spaces.notes).toEqual([
      expect.stringContaining(`${inner} is a repository of its own inside ${good}`),
    ]);
  });

  it('reads each head once: a second pass with the cache opens no transcript', async () => {
    const { settings, good } = home();
    placeCodexRollout(settings.codexHome, good, CODEX_FIXTURE.head, '2025/11/22', 'rollout-b.jsonl');
    const cache = createDiscoveryCache();
    const first = await discoverRepositories({ settings, cache });
    expect(cache.transcripts.size).toBe(1);
    expect(cache.rollouts.size).toBe(1);
    // Contents changed under the same paths are not read again (a transcript's head never changes).
    placeCodexRollout(
      settings.codexHome,
      join(good, '..'),
      CODEX_FIXTURE.head,
      '2025/11/22',
      'rollout-b.jsonl',
    );
    const second = await discoverRepositories({ settings, cache });
    expect(second.repositories).toEqual(first.repositories);
  });
});
