import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ensureRedisServer,
  findRedisServer,
  REDIS_SERVER_VARIABLE,
  RedisServerMissingError,
} from '../../harness/ensure-redis-server.js';
import { emptyBin, fakeExecutable, provision } from './helpers.js';

// The decision logic of the test command's redis-server provisioning, on folders of its own: an empty PATH is a
// machine without redis-server, and the injected `run` stands in for apt-get so nothing is installed here. The
// real install path runs for real on any fresh machine (and CI) through test/global-setup.ts.

const nowhere = '/nonexistent/redis-server';

describe('ensureRedisServer', () => {
  it('returns the redis-server found on the PATH without installing anything', () => {
    const { found, bin, calls } = provision(ensureRedisServer, { onPath: 'redis-server' });
    expect(found).toBe(join(bin, 'redis-server'));
    expect(calls).toEqual([]);
  });

  it('stops with the command that installs it when it may not install', () => {
    const attempt = () => provision(ensureRedisServer, { canInstall: false });
    expect(attempt).toThrow(RedisServerMissingError);
    expect(attempt).toThrow(/apt-get install -y redis-server/);
    expect(attempt).toThrow(new RegExp(REDIS_SERVER_VARIABLE));
  });

  it('updates the package lists, installs redis-server and returns the installed path', () => {
    const { found, bin, calls, lines } = provision(ensureRedisServer, { installs: 'redis-server' });
    expect(found).toBe(join(bin, 'redis-server'));
    expect(calls).toEqual([
      'apt-get update -qq',
      'apt-get install -y -qq --no-install-recommends redis-server',
    ]);
    expect(lines.join('\n')).toMatch(/installing it with apt-get/);
  });

  it('names the failed apt-get step, its output and the manual fix', () => {
    const attempt = () =>
      provision(ensureRedisServer, {
        run: (_command, args) =>
          args[0] === 'install'
            ? { status: 100, output: 'E: Unable to locate package redis-server' }
            : { status: 0, output: '' },
      });
    expect(attempt).toThrow(/apt-get install .* failed \(exit 100\)/);
    expect(attempt).toThrow(/Unable to locate package/);
    expect(attempt).toThrow(/sudo apt-get install -y redis-server/);
  });
});

describe('findRedisServer', () => {
  it('takes the path named by the variable', () => {
    const executable = fakeExecutable(emptyBin(), 'my-redis');
    expect(findRedisServer({ PATH: '', [REDIS_SERVER_VARIABLE]: executable }, nowhere)).toBe(executable);
  });

  it('refuses a named path that is not an executable file', () => {
    const directory = emptyBin();
    expect(() => findRedisServer({ PATH: '', [REDIS_SERVER_VARIABLE]: directory }, nowhere)).toThrow(
      /is not an executable file/,
    );
  });

  it('falls back to the Debian path when the PATH lacks it', () => {
    const executable = fakeExecutable(emptyBin(), 'redis-server');
    expect(findRedisServer({ PATH: emptyBin() }, executable)).toBe(executable);
    expect(findRedisServer({ PATH: emptyBin() }, nowhere)).toBeUndefined();
  });
});
