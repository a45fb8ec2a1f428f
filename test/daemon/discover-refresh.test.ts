import { afterEach, describe, expect, it } from 'vitest';
import type { Config, Space } from '../../src/config/schema.js';
import { createDaemon, type Daemon } from '../../src/daemon/daemon.js';
import { createFakeConsolidate, createFakeInspection, makeConfig, makeSpace, silentLogger } from './fakes.js';

/** The daemon's `discover` hook: spaces found before start, again before each tick, kept over a reload. */

const daemons: Daemon[] = [];
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.stop()));
});

function discovering(spaces: readonly Space[]): Config {
  return {
    ...makeConfig({ redisUrl: 'unused', redisPrefix: 'x', spaces }),
    redisUrl: undefined,
    discover: {
      agents: ['codex'],
      agentsMd: false,
      claudeHome: '/nonexistent/.claude',
      codexHome: '/nonexistent/.codex',
    },
  };
}

const repositorySpace = (id: string): Space => ({ ...makeSpace(id), repository: `/code/${id}` });

/** A started daemon of `config` with fake runs and inspection, no server, no tick at start, and `discover`. */
async function startDiscovering(
  config: Config,
  discover: (config: Config) => Promise<Config>,
): Promise<Daemon> {
  const daemon = createDaemon({
    config,
    consolidate: createFakeConsolidate().consolidate,
    inspectSpace: createFakeInspection().inspectSpace,
    logger: silentLogger,
    env: {},
    roles: { server: false },
    tickOnStart: false,
    discover,
  });
  daemons.push(daemon);
  await daemon.start();
  return daemon;
}

describe('a daemon with a discover hook', () => {
  it('puts the spaces found in effect at start, then whatever each tick finds, and keeps them over a reload', async () => {
    let found: Space[] = [repositorySpace('shop')];
    const calls: Config[] = [];
    const daemon = await startDiscovering(discovering([makeSpace('configured')]), (config) => {
      calls.push(config);
      return Promise.resolve({ ...config, spaces: [...config.spaces, ...found] });
    });
    expect(daemon.config.spaces.map((space) => space.id)).toEqual(['configured', 'shop']);

    found = [repositorySpace('shop'), repositorySpace('blog')];
    const report = await daemon.tick();
    expect(report.spaces.map((space) => space.spaceId)).toEqual(['configured', 'shop', 'blog']);
    // Discovery always starts from the config as given, never from the spaces it added.
    expect(calls.every((config) => config.spaces.map((space) => space.id).join() === 'configured')).toBe(
      true,
    );

    found = [];
    daemon.reload(discovering([makeSpace('configured'), makeSpace('other')]));
    expect(daemon.config.spaces.map((space) => space.id)).toEqual(['configured', 'other', 'shop', 'blog']);
    const after = await daemon.tick();
    expect(after.spaces.map((space) => space.spaceId)).toEqual(['configured', 'other']);
  });

  it('keeps the spaces it had when discovery fails', async () => {
    let fail = false;
    const daemon = await startDiscovering(discovering([]), (config) =>
      fail
        ? Promise.reject(new Error('home gone'))
        : Promise.resolve({ ...config, spaces: [repositorySpace('shop')] }),
    );
    fail = true;
    const report = await daemon.tick();
    expect(report.spaces.map((space) => space.spaceId)).toEqual(['shop']);
  });
});
