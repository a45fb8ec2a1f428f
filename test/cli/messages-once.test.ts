import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findFreePort } from '../../harness/redis-server.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { counted } from '../../src/util/plural.js';
import { runCliCaptured } from '../support/cli.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace } from '../support/space.js';

/**
 * What the CLI prints says each thing once and where it applies: the way to decide on a proposal, a space's
 * missing folder, the options a subcommand's help calls global, the address `start --help` names, and a count
 * of one in the singular.
 */

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });
const BIN = new URL('../../bin/dreamd.js', import.meta.url).pathname;
const run = promisify(execFile);

/** A space `home` in approval mode with one session, and a space `gone` whose sessions folder is missing. */
async function checkout() {
  const test = createTestSpace({ modelUrl: fake.url, examples: ['2026-11-02-lisbon-delivery.json'] });
  writeFileSync(
    join(test.root, 'dreamd.config.json'),
    JSON.stringify({
      spaces: [
        { id: 'home', sessions: './sessions', memory: './memory', approve: true },
        { id: 'gone', sessions: './no-such-folder', memory: './memory-gone' },
      ],
    }),
  );
  const env = {
    DREAMD_MODEL_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'sk-ant-test-key',
    // No daemon answers here: the run is in-process.
    DREAMD_PORT: String(await findFreePort()),
  };
  return (...argv: string[]) => runCliCaptured(argv, { cwd: test.root, env });
}

/** How many times `part` occurs in `text`. */
const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** The section of a help that starts at `title` (`Global Options:`) and ends at the next blank line. */
function section(help: string, title: string): string {
  const start = help.indexOf(title);
  if (start === -1) return '';
  const end = help.indexOf('\n\n', start);
  return help.slice(start, end === -1 ? undefined : end);
}

describe('the CLI says each thing once', () => {
  it('names how to decide on a proposal once after an approval run', async () => {
    const cli = await checkout();
    const result = await cli('consolidate', 'home', '--force');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/proposed in .*nothing written to memory until you decide/);
    expect(occurrences(result.stdout, 'dreamd proposals home')).toBe(1);
    expect(result.stdout).toContain('  decide     dreamd proposals home, then dreamd accept|reject');
  });

  it("names a space's missing sessions folder once in its status", async () => {
    const cli = await checkout();
    const result = await cli('status', 'gone');
    expect(occurrences(result.stdout, 'no-such-folder cannot be read')).toBe(1);
    expect(result.stdout).toContain(
      '  gates      closed: the space could not be inspected (the error below)',
    );
    expect(result.stdout).toMatch(/\n {2}error {6}sessions directory .*no-such-folder cannot be read/);
  });

  it("lists only dreamd's own options as global in a subcommand's help", async () => {
    const help = (await run('node', [BIN, 'history', 'show', '--help'])).stdout;
    const global = section(help, 'Global Options:');
    expect(global).toContain('--config <path>');
    expect(global).toContain('--json');
    expect(global).not.toContain('--limit');
    expect(global).not.toContain('--space');
    expect(occurrences(help, '--space <id>')).toBe(1);
  });

  it('names the address of the HTTP API in start --help as the environment sets it', async () => {
    const environment = { PATH: process.env.PATH, HOME: process.env.HOME };
    const plain = (await run('node', [BIN, 'start', '--help'], { env: environment })).stdout;
    expect(plain).toContain('listens on 127.0.0.1:7077');
    const moved = (
      await run('node', [BIN, 'start', '--help'], { env: { ...environment, DREAMD_PORT: '8123' } })
    ).stdout;
    expect(moved).toContain('listens on 127.0.0.1:8123');
  });
});

describe('counted', () => {
  it('puts the noun in the singular for one and in the plural otherwise', () => {
    expect(counted(1, 'session')).toBe('1 session');
    expect(counted(0, 'session')).toBe('0 sessions');
    expect(counted(2, 'repository', 'repositories')).toBe('2 repositories');
  });
});
