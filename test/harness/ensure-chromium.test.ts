import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CHROMIUM_VARIABLE,
  ChromiumMissingError,
  ensureChromium,
  findChromium,
} from '../../harness/ensure-chromium.js';
import { emptyBin, fakeExecutable, provision } from './helpers.js';

// The decision logic of the browser test's chromium provisioning, on folders of its own: an empty PATH is a
// machine without chromium, and the injected `run` stands in for apt-get so nothing is installed here. The real
// browser runs in test/daemon/page-browser.test.ts.

const nowhere = '/nonexistent/chromium';

describe('ensureChromium', () => {
  it('returns the chromium on the PATH (or chromium-browser) without installing anything', () => {
    const { found, bin, calls } = provision(ensureChromium, { onPath: 'chromium-browser' });
    expect(found).toBe(join(bin, 'chromium-browser'));
    expect(calls).toEqual([]);
  });

  it('installs Debian’s chromium with apt-get when it may, then finds it', () => {
    const { found, bin, calls } = provision(ensureChromium, { installs: 'chromium' });
    expect(found).toBe(join(bin, 'chromium'));
    expect(calls).toEqual(['apt-get update -qq', 'apt-get install -y -qq --no-install-recommends chromium']);
  });

  it('stops with the command to run when it may not install, or when apt-get fails', () => {
    expect(() => provision(ensureChromium, { canInstall: false })).toThrow(/apt-get install -y chromium/);
    expect(() =>
      provision(ensureChromium, {
        run: () => ({ status: 100, output: 'E: Unable to locate package chromium' }),
      }),
    ).toThrow(ChromiumMissingError);
  });

  it(`takes ${CHROMIUM_VARIABLE} first, and refuses one that is not executable`, () => {
    const bin = emptyBin();
    const own = fakeExecutable(bin, 'my-chrome');
    expect(findChromium({ PATH: '', [CHROMIUM_VARIABLE]: own }, nowhere)).toBe(own);
    expect(() => findChromium({ PATH: '', [CHROMIUM_VARIABLE]: join(bin, 'none') }, nowhere)).toThrow(
      ChromiumMissingError,
    );
  });
});
