import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { editDistance, nearestKey } from '../../src/config/config-issues.js';
import { loadConfig } from '../../src/config/load.js';
import { useTempDir } from '../support/fixtures.js';

/**
 * A config the loader refuses says where: the file, the line and the column of the problem, once, and for a
 * key it does not know, the known key it probably meant.
 */

const dir = useTempDir('config-errors');
const BIN = new URL('../../bin/dreamd.js', import.meta.url).pathname;

/** The message loadConfig refuses the config in `dir` with. */
function refusal(env: Record<string, string> = {}): string {
  try {
    loadConfig({ cwd: dir.path, env: { HOME: dir.path, ...env } });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
}

const TRAILING_COMMA = '{\n  "spaces": [\n    { "id": "a", "sessions": "s", "memory": "m" },\n  ]\n}\n';

describe('a config with a syntax error', () => {
  it('names the line and column of a trailing comma in JSON, and says "not valid JSON" once', () => {
    const path = join(dir.path, 'dreamd.config.json');
    writeFileSync(path, TRAILING_COMMA);
    expect(refusal()).toBe(
      `${path} line 4 column 3 is not valid JSON: a comma before ']': JSON allows none after the last item; fix the syntax`,
    );
  });

  it('names the line and column of a missing comma, and of a file that ends too early', () => {
    const path = join(dir.path, 'dreamd.config.json');
    writeFileSync(path, '{\n  "gates": { "minSessions": 2 "minHours": 1 }\n}\n');
    expect(refusal()).toMatch(
      new RegExp(`^${path} line 2 column 31 is not valid JSON: [^"]*; fix the syntax$`),
    );
    writeFileSync(path, '{\n  "gates": {\n');
    expect(refusal()).toBe(
      `${path} line 3 column 1 is not valid JSON: the file ends before the JSON does (a bracket or a quote is not closed); fix the syntax`,
    );
  });

  it('names the place of a YAML syntax error once', () => {
    const path = join(dir.path, 'dreamd.config.yaml');
    writeFileSync(path, 'spaces:\n  - id: a\n    sessions: s\n   memory: m\n');
    const message = refusal();
    expect(message).toMatch(new RegExp(`^${path} line 4 column \\d+ is not valid YAML: .+; fix the syntax$`));
    expect(message.match(/line \d+/g)).toHaveLength(1);
  });

  it('is printed once by the real executable, with its place', async () => {
    writeFileSync(join(dir.path, 'dreamd.config.json'), TRAILING_COMMA);
    const result = await promisify(execFile)('node', [BIN, 'status'], {
      cwd: dir.path,
      env: { PATH: process.env.PATH, HOME: dir.path },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect('code' in result ? result.code : 0).toBe(2);
    expect(result.stderr.match(/not valid JSON/g)).toHaveLength(1);
    expect(result.stderr).toContain('dreamd.config.json line 4 column 3');
  });
});

describe('a config with a key the schema does not know', () => {
  it('names its line and column and the nearest known key, top level and nested, in JSON', () => {
    const path = join(dir.path, 'dreamd.config.json');
    writeFileSync(
      path,
      '{\n  "modle": { "name": "x" },\n  "gates": { "minHourz": 3 },\n  "spaces": [{ "id": "a", "sessions": "s", "memory": "m", "zzzzzzz": 1 }]\n}\n',
    );
    expect(refusal().split('\n').sort()).toEqual(
      [
        `${path} line 2 column 3: modle: unknown setting; did you mean \`model\`?`,
        `${path} line 3 column 14: gates.minHourz: unknown setting; did you mean \`gates.minHours\`?`,
        `${path} line 4 column 59: spaces.0.zzzzzzz: unknown setting; the settings there are \`id\`, \`sessions\`, \`sources\`, \`memory\`, \`format\`, \`layout\`, \`agentsMd\`, \`agentsMdBudget\`, \`approve\``,
      ].sort(),
    );
  });

  it('names the line and column in YAML, inside a list of spaces too', () => {
    const path = join(dir.path, 'dreamd.config.yaml');
    writeFileSync(path, 'spaces:\n  - id: a\n    sessions: s\n    memroyDir: m\n');
    const lines = refusal().split('\n');
    expect(lines).toContain(
      `${path} line 4 column 5: spaces.0.memroyDir: unknown setting; did you mean \`spaces.0.memory\`?`,
    );
    // The missing `memory` is placed at the space that lacks it.
    expect(lines).toContain(
      `${path} line 2 column 5: spaces.0.memory: Invalid input: expected string, received undefined`,
    );
    expect(new Set(lines).size).toBe(lines.length);
  });

  it('names the variable for a value the environment set, not the file', () => {
    writeFileSync(join(dir.path, 'dreamd.config.json'), '{ "server": { "port": 7077 } }');
    expect(refusal({ DREAMD_PORT: '99999999' })).toBe(
      'DREAMD_PORT=99999999: server.port: Too big: expected number to be <=65535',
    );
  });
});

describe('the nearest key', () => {
  it('counts a swap of two neighbouring letters as one edit', () => {
    expect(editDistance('modle', 'model')).toBe(1);
    expect(editDistance('minHourz', 'minHours')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('suggests a key only when it is near enough to be a slip', () => {
    expect(nearestKey('modle', ['model', 'gates', 'spaces'])).toBe('model');
    expect(nearestKey('SPACES', ['model', 'spaces'])).toBe('spaces');
    expect(nearestKey('zzzzzzz', ['model', 'gates', 'spaces'])).toBeUndefined();
  });
});
