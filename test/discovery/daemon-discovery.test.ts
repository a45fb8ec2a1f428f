import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import { discoveredSpaceId } from '../../src/discovery/index.js';
import { createDreamd } from '../../src/dreamd.js';
import { CODEX_FIXTURE, FIXTURE } from '../transcripts/helpers.js';
import { makeRepository, placeClaudeSession, placeCodexRollout } from './agent-home.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

/**
 * A running daemon finds what the agents add while it runs: a new repository, a new session of a known one,
 * without a restart or a reload.
 */

const daemons: Daemon[] = [];
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.stop()));
});

function setUp() {
  const root = realpathSync(tempDirRemovedAfterTest('daemon-discover'));
  const claudeHome = join(root, '.claude');
  const codexHome = join(root, '.codex');
  mkdirSync(join(claudeHome, 'projects'), { recursive: true });
  writeFileSync(join(root, 'dreamd.config.json'), JSON.stringify({ discover: ['claude-code', 'codex'] }));
  const config = loadConfig({
    cwd: root,
    env: { CLAUDE_CONFIG_DIR: claudeHome, CODEX_HOME: codexHome, ANTHROPIC_API_KEY: 'sk-ant-test-key' },
  });
  return { root, claudeHome, codexHome, config };
}

describe('a daemon with discovery', () => {
  it('checks the discovered spaces for an interrupted commit before it starts', async () => {
    const { root, claudeHome, config } = setUp();
    const shop = makeRepository(join(root, 'code', 'shop'));
    placeClaudeSession(claudeHome, shop, FIXTURE.helloWorld);
    const dreamd = createDreamd({ getConfig: () => config, env: {}, logger: pino({ level: 'silent' }) });
    const outcomes = await dreamd.recoverSpaces();
    expect(outcomes.map((outcome) => outcome.spaceId)).toEqual([discoveredSpaceId(shop)]);
  });

  it('gains the space of a repository an agent starts in while it runs, at the next tick', async () => {
    const { root, claudeHome, codexHome, config } = setUp();
    const shop = makeRepository(join(root, 'code', 'shop'));
    placeClaudeSession(claudeHome, shop, FIXTURE.helloWorld);
    const dreamd = createDreamd({ getConfig: () => config, env: {}, logger: pino({ level: 'silent' }) });
    const daemon = dreamd.daemon({ roles: { server: false }, tickOnStart: false });
    daemons.push(daemon);
    await daemon.start();
    expect(daemon.config.spaces.map((space) => space.repository)).toEqual([shop]);

    const first = await daemon.tick();
    expect(first.spaces).toEqual([
      expect.objectContaining({ spaceId: discoveredSpaceId(shop), outcome: 'gates-closed' }),
    ]);

    const blog = makeRepository(join(root, 'code', 'blog'));
    placeCodexRollout(
      codexHome,
      blog,
      CODEX_FIXTURE.twoPlusTwo,
      '2025/10/29',
      'rollout-2025-10-29T00-59-38-x.jsonl',
    );
    const second = await daemon.tick();
    expect(second.spaces.map((space) => space.spaceId).sort()).toEqual(
      [discoveredSpaceId(shop), discoveredSpaceId(blog)].sort(),
    );
    const blogSpace = daemon.config.spaces.find((space) => space.repository === blog);
    expect(blogSpace?.sources).toEqual([
      {
        format: 'codex',
        sessionsDir: join(codexHome, 'sessions'),
        files: [join('2025', '10', '29', 'rollout-2025-10-29T00-59-38-x.jsonl')],
      },
    ]);
    // The inspection of the new space sees its session (the gates count it).
    const inspection = await dreamd.inspectSpace(blogSpace!);
    expect(inspection).toMatchObject({ settledNew: 1, broken: [] });
  });
});
