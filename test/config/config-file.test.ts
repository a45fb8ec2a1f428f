import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

/**
 * Where the config file is found: in the working directory or a folder above it, as git and eslint find
 * theirs, up to the home folder; `dreamd.config.yaml` / `.yml` read as `dreamd.config.json` is.
 */

/** A home folder with `code/shop/server/api` in it. */
function home(): { home: string; deep: string } {
  const root = realpathSync(tempDirRemovedAfterTest('config-file'));
  const deep = join(root, 'code', 'shop', 'server', 'api');
  mkdirSync(deep, { recursive: true });
  return { home: root, deep };
}

const SPACE_YAML = [
  '# the shop, by hand',
  'spaces:',
  '  - id: shop',
  '    sessions: shop/sessions',
  '    memory: shop/memory',
  'gates:',
  '  minSessions: 2',
  '',
].join('\n');

describe('finding the config file', () => {
  it('finds dreamd.config.json in a folder above the working directory and resolves paths against it', () => {
    const { home: root, deep } = home();
    writeFileSync(
      join(root, 'code', 'dreamd.config.json'),
      JSON.stringify({ spaces: [{ id: 'shop', sessions: 'shop/sessions', memory: 'shop/memory' }] }),
    );
    const config = loadConfig({ cwd: deep, env: { HOME: root } });
    expect(config.source).toBe(join(root, 'code', 'dreamd.config.json'));
    expect(config.spaces[0]).toMatchObject({
      id: 'shop',
      sessionsDir: join(root, 'code', 'shop', 'sessions'),
      memoryDir: join(root, 'code', 'shop', 'memory'),
    });
  });

  it('takes the nearest file, reads the home folder itself, looks no higher, and yields to DREAMD_CONFIG', () => {
    const { home: root, deep } = home();
    writeFileSync(join(root, 'dreamd.config.json'), JSON.stringify({ gates: { minSessions: 3 } }));
    writeFileSync(
      join(root, 'code', 'shop', 'dreamd.config.json'),
      JSON.stringify({ gates: { minSessions: 4 } }),
    );
    expect(loadConfig({ cwd: deep, env: { HOME: root } }).gates.minSessions).toBe(4);
    expect(loadConfig({ cwd: join(root, 'code'), env: { HOME: root } }).gates.minSessions).toBe(3);
    // With the home one level down, the file above it is not the user's: none is read.
    const below = loadConfig({ cwd: join(root, 'code'), env: { HOME: join(root, 'code') } });
    expect(below.source).toBeUndefined();
    expect(below.spaces.map((space) => space.id)).toEqual(['default']);
    const other = join(root, 'other.json');
    writeFileSync(other, JSON.stringify({ gates: { minSessions: 7 } }));
    expect(loadConfig({ cwd: deep, env: { HOME: root, DREAMD_CONFIG: other } }).gates.minSessions).toBe(7);
  });
});

describe('a YAML config', () => {
  it('reads dreamd.config.yaml found upward as the JSON file would be read', () => {
    const { home: root, deep } = home();
    writeFileSync(join(root, 'code', 'dreamd.config.yaml'), SPACE_YAML);
    const config = loadConfig({ cwd: deep, env: { HOME: root } });
    expect(config.source).toBe(join(root, 'code', 'dreamd.config.yaml'));
    expect(config.gates.minSessions).toBe(2);
    expect(config.spaces[0]).toMatchObject({ id: 'shop', memoryDir: join(root, 'code', 'shop', 'memory') });
  });

  it('reads a .yml file named with --config', () => {
    const { home: root } = home();
    const path = join(root, 'settings.yml');
    writeFileSync(path, SPACE_YAML);
    expect(loadConfig({ path, cwd: root, env: { HOME: root } }).spaces[0]?.id).toBe('shop');
  });

  it('refuses a folder that holds both a JSON and a YAML config, naming both and the fix', () => {
    const { home: root, deep } = home();
    writeFileSync(join(root, 'code', 'dreamd.config.json'), '{}');
    writeFileSync(join(root, 'code', 'dreamd.config.yml'), SPACE_YAML);
    expect(() => loadConfig({ cwd: deep, env: { HOME: root } })).toThrow(
      `${join(root, 'code')} holds dreamd.config.json and dreamd.config.yml; keep one of them (or name one with --config)`,
    );
  });

  it('names the file, line and column of a YAML syntax error, and a YAML file that is not a mapping', () => {
    const { home: root } = home();
    const path = join(root, 'dreamd.config.yaml');
    writeFileSync(path, 'gates:\n  minSessions: 2\n bad: [\n');
    expect(() => loadConfig({ cwd: root, env: { HOME: root } })).toThrow(
      new RegExp(`^${path} line \\d+ column \\d+ is not valid YAML: .*; fix the syntax$`),
    );
    writeFileSync(path, '- one\n- two\n');
    expect(() => loadConfig({ cwd: root, env: { HOME: root } })).toThrow(
      `${path}: the config must be a YAML mapping (key: value lines)`,
    );
  });

  it('names the field of a YAML config the schema refuses, with the file, line and column', () => {
    const { home: root } = home();
    const path = join(root, 'dreamd.config.yaml');
    writeFileSync(path, 'gates:\n  minSessions: many\n');
    expect(() => loadConfig({ cwd: root, env: { HOME: root } })).toThrow(
      `${path} line 2 column 16: gates.minSessions: `,
    );
  });
});
