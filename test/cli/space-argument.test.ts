import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliCaptured } from '../support/cli.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

/** Every command that works on a space takes it positionally or with --space, and refuses two different ones. */

interface Envelope {
  ok: boolean;
  error?: { name: string; message: string; code?: string };
  data?: unknown;
}

/** A folder whose config has two spaces, alpha and beta, with empty sessions and memory. */
function twoSpaces(): string {
  const root = tempDirRemovedAfterTest('space-argument');
  const spaces = ['alpha', 'beta'].map((id) => {
    mkdirSync(join(root, id, 'sessions'), { recursive: true });
    mkdirSync(join(root, id, 'memory'), { recursive: true });
    return { id, sessions: `${id}/sessions`, memory: `${id}/memory` };
  });
  writeFileSync(join(root, 'dreamd.config.json'), JSON.stringify({ spaces }));
  return root;
}

/** Each command that works on a space, with the arguments it needs before the space. */
const COMMANDS: readonly (readonly string[])[] = [
  ['status'],
  ['sessions', 'list'],
  ['consolidate', '--in-process'],
  ['memory', 'show'],
  ['memory', 'search', 'bakery'],
  ['memory', 'forget', 'f-0000'],
  ['history'],
  ['history', 'show', 'r-0000'],
  ['rollback', 'r-0000'],
  ['proposals'],
  ['accept', 'r-0000'],
  ['reject', 'r-0000'],
  ['batch', 'cancel'],
  ['chat', 'hello'],
];

async function run(root: string, argv: readonly string[]): Promise<{ code: number; envelope: Envelope }> {
  const result = await runCliCaptured([...argv, '--json'], {
    cwd: root,
    env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' },
  });
  return { code: result.code, envelope: result.json<Envelope>() };
}

describe('naming a space', () => {
  it('takes the space positionally or with --space on every command that works on one', async () => {
    const root = twoSpaces();
    for (const command of COMMANDS) {
      for (const named of [
        [...command, 'nope'],
        [...command, '--space', 'nope'],
      ]) {
        const { code, envelope } = await run(root, named);
        expect({ argv: named.join(' '), code, error: envelope.error?.message }).toMatchObject({
          code: 2,
          error: expect.stringContaining('no space "nope"; configured spaces: alpha, beta'),
        });
      }
    }
  });

  it('refuses two different spaces, exit 2, and takes the same one named twice', async () => {
    const root = twoSpaces();
    for (const command of COMMANDS) {
      const { code, envelope } = await run(root, [...command, 'alpha', '--space', 'beta']);
      expect({ argv: command.join(' '), code, envelope }).toMatchObject({
        code: 2,
        envelope: {
          ok: false,
          error: { code: 'dreamd.spaceNamedTwice', message: expect.stringMatching(/alpha and --space beta/) },
        },
      });
    }
    const positional = await run(root, ['memory', 'show', 'beta']);
    const option = await run(root, ['memory', 'show', '--space', 'beta']);
    const both = await run(root, ['memory', 'show', 'beta', '--space', 'beta']);
    expect(positional.code).toBe(0);
    expect(positional.envelope.data).toMatchObject({ space: 'beta' });
    expect(option.envelope).toEqual(positional.envelope);
    expect(both.envelope).toEqual(positional.envelope);
    const search = await run(root, ['memory', 'search', 'bakery', '--space', 'alpha']);
    expect(search.envelope.data).toMatchObject({ space: 'alpha', results: [] });
  });
});
