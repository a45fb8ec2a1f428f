import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CHROMIUM_VARIABLE,
  ChromiumMissingError,
  ensureChromium,
  findChromium,
} from '../../harness/ensure-chromium.js';
import {
  ensureRedisServer,
  findRedisServer,
  REDIS_SERVER_VARIABLE,
  RedisServerMissingError,
} from '../../harness/ensure-redis-server.js';
import { emptyBin, fakeExecutable, provision } from './helpers.js';

// The decision logic of the test set-up's two installers, on folders of their own: an empty PATH is a machine
// without the program, and the injected `run` stands in for apt-get so nothing is installed here. The real
// install of redis-server runs on any fresh machine (and CI) through test/global-setup.ts; the real browser runs
// in test/daemon/page-browser.test.ts.

const nowhere = '/nonexistent/program';

describe.each([
  {
    program: 'redis-server',
    onPath: 'redis-server',
    ensure: ensureRedisServer,
    find: findRedisServer,
    variable: REDIS_SERVER_VARIABLE,
    Missing: RedisServerMissingError,
  },
  {
    // Ubuntu names its package chromium-browser: the installer takes either name from the PATH.
    program: 'chromium',
    onPath: 'chromium-browser',
    ensure: ensureChromium,
    find: findChromium,
    variable: CHROMIUM_VARIABLE,
    Missing: ChromiumMissingError,
  },
])('the $program installer', ({ program, onPath, ensure, find, variable, Missing }) => {
  it(`returns the ${onPath} found on the PATH without installing anything`, () => {
    const { found, bin, calls } = provision(ensure, { onPath });
    expect(found).toBe(join(bin, onPath));
    expect(calls).toEqual([]);
  });

  it(`updates the package lists, installs ${program} and returns the installed path`, () => {
    const { found, bin, calls, lines } = provision(ensure, { installs: program });
    expect(found).toBe(join(bin, program));
    expect(calls).toEqual([
      'apt-get update -qq',
      `apt-get install -y -qq --no-install-recommends ${program}`,
    ]);
    expect(lines.join('\n')).toMatch(/installing it with apt-get/);
  });

  it('stops with the command that installs it, or the variable to set, when it may not install', () => {
    const attempt = () => provision(ensure, { canInstall: false });
    expect(attempt).toThrow(Missing);
    expect(attempt).toThrow(new RegExp(`apt-get install -y ${program}`));
    expect(attempt).toThrow(new RegExp(variable));
  });

  it('names the failed apt-get step, its output and the manual fix', () => {
    const attempt = () =>
      provision(ensure, {
        run: (_command, args) =>
          args[0] === 'install'
            ? { status: 100, output: `E: Unable to locate package ${program}` }
            : { status: 0, output: '' },
      });
    expect(attempt).toThrow(Missing);
    expect(attempt).toThrow(/apt-get install .* failed \(exit 100\)/);
    expect(attempt).toThrow(/Unable to locate package/);
    expect(attempt).toThrow(new RegExp(`sudo apt-get install -y ${program}`));
  });

  it('takes the path named by the variable first, and refuses one that is not an executable file', () => {
    const bin = emptyBin();
    const own = fakeExecutable(bin, `my-${program}`);
    expect(find({ PATH: '', [variable]: own }, nowhere)).toBe(own);
    expect(() => find({ PATH: '', [variable]: join(bin, 'none') }, nowhere)).toThrow(Missing);
    expect(() => find({ PATH: '', [variable]: bin }, nowhere)).toThrow(/is not an executable file/);
  });

  it('falls back to the Debian path when the PATH lacks it', () => {
    const executable = fakeExecutable(emptyBin(), program);
    expect(find({ PATH: emptyBin() }, executable)).toBe(executable);
    expect(find({ PATH: emptyBin() }, nowhere)).toBeUndefined();
  });
});
