import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import type * as Yaml from 'yaml';
import { ConfigError } from '../errors.js';

/**
 * Where the config file is and what it says. Without `--config` or `DREAMD_CONFIG`, the file is looked up as
 * git and eslint look up theirs: in the working directory, then in each folder above it, up to the user's
 * home (looked in too) or the filesystem root. In each folder `dreamd.config.json`, `dreamd.config.yaml` and
 * `dreamd.config.yml` are looked for; the first folder holding one of them has the config, and two of them in
 * one folder is a ConfigError (which one counts would be a guess).
 */

/** The config file's names, in the order a folder is read; the first is the one the docs show. */
export const CONFIG_FILE_NAMES = ['dreamd.config.json', 'dreamd.config.yaml', 'dreamd.config.yml'] as const;

/**
 * The config file that applies in `cwd`: the nearest folder at or above it that holds one of
 * `CONFIG_FILE_NAMES`, stopping after `home` (when `cwd` is in it) or at the root. Undefined: none.
 */
export function findConfigFile(cwd: string, home: string): string | undefined {
  const top = resolve(home);
  for (let folder = resolve(cwd); ; folder = dirname(folder)) {
    const present = CONFIG_FILE_NAMES.map((name) => join(folder, name)).filter((path) => existsSync(path));
    if (present.length > 1) {
      throw new ConfigError(
        `${folder} holds ${present.map((path) => path.slice(folder.length + 1)).join(' and ')}; ` +
          'keep one of them (or name one with --config)',
        'config',
      );
    }
    if (present.length === 1) return present[0];
    if (folder === top || dirname(folder) === folder) return undefined;
  }
}

/** The user's home as the environment gives it (`HOME`), else the operating system's. */
export function homeOf(env: Readonly<Record<string, string | undefined>>): string {
  const home = env.HOME;
  return home === undefined || home === '' ? homedir() : home;
}

/** True for a file read as YAML: its name ends in `.yaml` or `.yml`. */
function isYaml(path: string): boolean {
  const extension = extname(path).toLowerCase();
  return extension === '.yaml' || extension === '.yml';
}

/**
 * The config file's settings, before validation: a JSON object, or a YAML mapping for a `.yaml`/`.yml` file.
 * A file that cannot be read or parsed, or holds something else, is a ConfigError naming the file, the line
 * and column where the parser stopped, and the fix.
 */
export function readConfigFile(source: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${source}: ${(error as Error).message}`, 'config', {
      cause: error,
    });
  }
  const yaml = isYaml(source);
  let parsed: unknown;
  try {
    parsed = yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message.split('\n')[0] ?? '';
    const place = yaml ? yamlErrorPlace(error) : jsonErrorPlace(text, message);
    throw new ConfigError(
      `${source}${place} is not valid ${yaml ? 'YAML' : 'JSON'}: ${message}; fix the syntax`,
      'config',
      { cause: error },
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(
      `${source}: the config must be a ${yaml ? 'YAML mapping (key: value lines)' : 'JSON object'}`,
      '(top level)',
    );
  }
  return parsed as Record<string, unknown>;
}

/**
 * YAML is parsed by the `yaml` package, loaded only when a YAML config is read: a JSON config (and every
 * command that reads no memory file) does not pay the tens of milliseconds it takes to load.
 */
function parseYaml(text: string): unknown {
  const load = createRequire(import.meta.url);
  return (load('yaml') as typeof Yaml).parse(text);
}

/** ` line 3 column 8` from the `yaml` package's error, empty when it names no place. */
function yamlErrorPlace(error: unknown): string {
  const position = (error as { linePos?: readonly { line: number; col: number }[] }).linePos?.[0];
  return position === undefined ? '' : ` line ${position.line} column ${position.col}`;
}

/**
 * ` line 3 column 8` for a JSON.parse error, from the offset V8 names (`… at position 41`, every Node we
 * support) or the end of the text (`Unexpected end of JSON input`); empty when the message names neither.
 */
export function jsonErrorPlace(text: string, message: string): string {
  const position = /at position (\d+)/.exec(message)?.[1];
  const offset =
    position !== undefined ? Number(position) : /end of JSON input/.test(message) ? text.length : undefined;
  if (offset === undefined) return '';
  const before = text.slice(0, offset).split('\n');
  return ` line ${before.length} column ${before[before.length - 1]!.length + 1}`;
}
