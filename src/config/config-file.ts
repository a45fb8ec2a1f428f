import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import type * as Yaml from 'yaml';
import { ConfigError } from '../errors.js';
import { describeJsonParseError, lineAndColumn } from '../util/json-parse-error.js';

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
    const { place, detail } = yaml ? yamlProblem(error) : jsonProblem(text, error);
    throw new ConfigError(
      `${source}${place} is not valid ${yaml ? 'YAML' : 'JSON'}: ${detail}; fix the syntax`,
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

/** A syntax error's place (` line 3 column 8`, empty when unknown) and what is wrong, each said once. */
interface SyntaxProblem {
  readonly place: string;
  readonly detail: string;
}

/** The `yaml` package's error: its place, and its first line without the place it repeats. */
function yamlProblem(error: unknown): SyntaxProblem {
  const position = (error as { linePos?: readonly { line: number; col: number }[] }).linePos?.[0];
  const first = ((error as Error).message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
  return {
    place: position === undefined ? '' : ` line ${position.line} column ${position.col}`,
    detail: first,
  };
}

/**
 * A JSON.parse error: the place from the offset V8 names, the text it quotes (an unexpected token) or the
 * end of the text (`Unexpected end of JSON input`); what is wrong (that the text ends early, when it does) without V8's quote and its own "is not
 * valid JSON", and, for a comma before a closing bracket, that JSON allows no trailing comma.
 */
export function jsonProblem(text: string, error: unknown): SyntaxProblem {
  const described = describeJsonParseError(error, text);
  const offset = described.position ?? (/end of JSON input/.test(described.detail) ? text.length : undefined);
  const atEnd = offset !== undefined && text.slice(offset).trim() === '';
  let detail = described.detail.replace(/,? ?(\.\.\.)?"[\s\S]*"(\.\.\.)? is not valid JSON$/, '');
  if (offset !== undefined && /^[\]}]$/.test(text[offset] ?? '') && /,\s*$/.test(text.slice(0, offset))) {
    detail = `a comma before '${text[offset]!}': JSON allows none after the last item`;
  } else if (atEnd) {
    detail = 'the file ends before the JSON does (a bracket or a quote is not closed)';
  }
  if (offset === undefined) return { place: '', detail };
  const { line, column } = lineAndColumn(text, offset);
  return { place: ` line ${line} column ${column}`, detail };
}
