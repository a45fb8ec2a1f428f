import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTempDir } from '../support/fixtures.js';

/**
 * bin/run-source.js, how a checkout runs its TypeScript: each source compiled into .cache/ once, compiled
 * again when it changes, and its compiled file removed when it is gone. Run in a child process (the runner is
 * the executable's plain JavaScript) on a small checkout of its own in a temporary folder.
 */

const RUNNER = new URL('../../bin/run-source.js', import.meta.url).href;
const run = promisify(execFile);
const temp = useTempDir('runner');
let root: string;

beforeEach(() => {
  root = temp.path;
  writeFileSync(
    join(root, 'package.json'),
    JSON.stringify({ name: 'dreamd', type: 'module', version: '0.0.0' }),
  );
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  writeFileSync(join(root, 'src', 'cli', 'word.ts'), "export const word: string = 'first';\n");
  writeFileSync(
    join(root, 'src', 'cli', 'main.ts'),
    "import { word } from './word.js';\nimport type { Readable } from 'node:stream';\nconst never: Readable | undefined = undefined;\nprocess.stdout.write(`${word} ${String(never)}`);\n",
  );
});

/** Runs the fake checkout's CLI through the runner; its output. */
async function runCheckout(): Promise<string> {
  const script = `const { runSource } = await import(${JSON.stringify(RUNNER)}); await runSource(${JSON.stringify(root)});`;
  const { stdout } = await run('node', ['--input-type=module', '-e', script], { cwd: root });
  return stdout;
}

const compiled = (path: string) => join(root, '.cache', 'dreamd-cli', 'v1', 'src', path);

describe('the checkout runner', () => {
  it('runs the TypeScript source, and the changed source after an edit', async () => {
    expect(await runCheckout()).toBe('first undefined');
    expect(readFileSync(compiled('cli/word.js'), 'utf8')).toContain('const word = "first"');

    writeFileSync(join(root, 'src', 'cli', 'word.ts'), "export const word: string = 'second';\n");
    // Its own modification time, whatever the file system's clock resolution.
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(root, 'src', 'cli', 'word.ts'), later, later);
    expect(await runCheckout()).toBe('second undefined');
  });

  it('compiles workers/ beside src/, as `dreamd start` imports it from there', async () => {
    mkdirSync(join(root, 'workers'));
    writeFileSync(join(root, 'workers', 'main.ts'), "export const role: string = 'worker';\n");
    writeFileSync(
      join(root, 'src', 'cli', 'main.ts'),
      "const { role } = await import('../../workers/main.js');\nprocess.stdout.write(role);\n",
    );
    expect(await runCheckout()).toBe('worker');
  });

  it('removes the compiled file of a source that is gone', async () => {
    writeFileSync(join(root, 'src', 'cli', 'old.ts'), 'export const old = 1;\n');
    await runCheckout();
    expect(existsSync(compiled('cli/old.js'))).toBe(true);
    rmSync(join(root, 'src', 'cli', 'old.ts'));
    await runCheckout();
    expect(existsSync(compiled('cli/old.js'))).toBe(false);
  });
});
