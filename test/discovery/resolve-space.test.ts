import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as kit from '../../src/agent-kit.js';
import { discoveredSpaceId } from '../../src/discovery/index.js';
import { FIXTURE } from '../transcripts/helpers.js';
import { addWorktree, makeRepository, placeClaudeSession } from './agent-home.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

/** The agent kit's `findSpace`: the one resolution the CLI uses, discovered spaces and paths included. */

function machine() {
  const home = realpathSync(tempDirRemovedAfterTest('resolve-space'));
  const claudeHome = join(home, '.claude');
  const shop = makeRepository(join(home, 'code', 'shop'));
  const feature = addWorktree(shop, join(home, 'code', 'shop-feature'), 'feature');
  mkdirSync(join(shop, 'server'));
  placeClaudeSession(claudeHome, shop, FIXTURE.helloWorld);
  writeFileSync(join(home, 'dreamd.config.json'), JSON.stringify({ discover: ['claude-code'] }));
  const env = { HOME: home, CLAUDE_CONFIG_DIR: claudeHome };
  return { home, shop, feature, env };
}

describe("the agent kit's findSpace", () => {
  it('finds a discovered space by id, by its repository, a subfolder, a worktree, and as the only one', async () => {
    const { home, shop, feature, env } = machine();
    const config = await kit.loadConfig({ cwd: join(shop, 'server'), env });
    expect(config.source).toBe(join(home, 'dreamd.config.json'));
    const id = discoveredSpaceId(shop);
    for (const [name, cwd] of [
      [id, home],
      ['.', join(shop, 'server')],
      [shop, home],
      ['.', feature],
      [undefined, home],
    ] as const) {
      const space = await kit.findSpace(config, name, { cwd });
      expect({ name, cwd, id: space.id, repository: space.repository }).toEqual({
        name,
        cwd,
        id,
        repository: shop,
      });
    }
  });

  it('names a folder no space serves, with the discovered spaces and the fix', async () => {
    const { home, env } = machine();
    const config = await kit.loadConfig({ cwd: home, env });
    await expect(kit.findSpace(config, join(home, 'code'), { cwd: home })).rejects.toThrow(
      `no space serves the repository ${join(home, 'code')}: no agent session ran in it`,
    );
    await expect(kit.findSpace(config, './missing', { cwd: home })).rejects.toThrow(
      `no space "./missing", and no folder ${join(home, 'missing')}`,
    );
  });
});
