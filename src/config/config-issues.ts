import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { z } from 'zod';

/**
 * What is wrong with a config that parsed but does not validate, one line per problem: where it was set (the
 * environment variable, else the file with the line and column of the setting), the setting's path, and what
 * to do. An unknown key names the nearest known key of the same object (`did you mean \`model\`?`).
 */

/** Where the config's settings came from, to say where each problem is. */
export interface IssueOrigin {
  /** The config file, or undefined when there is none (the settings came from the environment). */
  readonly file: string | undefined;
  /** Setting (`server.port`) → `DREAMD_PORT=abc`, for the settings the environment set. */
  readonly fromEnvironment: ReadonlyMap<string, string>;
}

/**
 * The optimal string alignment distance of two words: insertions, deletions, substitutions and swaps of
 * two neighbouring letters each cost 1 (`modle` is 1 from `model`).
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known key nearest to `word`, when it is near enough to be a slip: at most two fifths of the word's letters
 * apart (two for short words: `memroyDir` is 4 from `memory`, `modle` 1 from `model`), compared without case. Undefined when none is.
 */
export function nearestKey(word: string, known: readonly string[]): string | undefined {
  const allowed = Math.max(2, Math.ceil((word.length * 2) / 5));
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    const distance = editDistance(word.toLowerCase(), key.toLowerCase());
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { key, distance };
  }
  return best?.key;
}

/** The schema inside the wrappers that do not change an object's keys (optional, default, nullable, pipe). */
function unwrapped(schema: z.core.$ZodType): z.core.$ZodType {
  const def = schema._zod.def as { type: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType };
  if (def.innerType !== undefined) return unwrapped(def.innerType);
  if (def.type === 'pipe' && def.in !== undefined) return unwrapped(def.in);
  return schema;
}

/** The keys the object at `path` of `schema` accepts (each option's, for a union); [] when there is none. */
export function knownKeysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  const inner = unwrapped(schema);
  const def = inner._zod.def as {
    type: string;
    shape?: Record<string, z.core.$ZodType>;
    element?: z.core.$ZodType;
    options?: readonly z.core.$ZodType[];
  };
  if (def.type === 'union') return [...new Set(def.options!.flatMap((option) => knownKeysAt(option, path)))];
  if (path.length === 0) return def.type === 'object' ? Object.keys(def.shape!) : [];
  const [head, ...rest] = path;
  if (def.type === 'array') return knownKeysAt(def.element!, rest);
  const next = def.type === 'object' ? def.shape![String(head)] : undefined;
  return next === undefined ? [] : knownKeysAt(next, rest);
}

/** Finds a setting's line and column in the config file's text (JSON is read as the YAML it also is). */
type Locate = (path: readonly PropertyKey[], key?: string) => string;

/** ` line 3 column 5` of the setting at `path` (its key, when `key` names one of the object there). */
function createLocate(file: string | undefined): Locate {
  if (file === undefined) return () => '';
  let document: Yaml.Document.Parsed | undefined;
  let lines: Yaml.LineCounter | undefined;
  try {
    const yaml = createRequire(import.meta.url)('yaml') as typeof Yaml;
    lines = new yaml.LineCounter();
    document = yaml.parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines });
    if (document.errors.length > 0) document = undefined;
  } catch {
    document = undefined; // the place is a help, not the message: without it the problem is still named
  }
  return (path, key) => {
    if (document === undefined || lines === undefined) return '';
    // The deepest part of the path that is in the file (a missing setting is placed at its object).
    for (let length = path.length; length >= 0; length -= 1) {
      const node = document.getIn(path.slice(0, length), true) as Yaml.Node | undefined;
      if (node?.range === undefined || node.range === null) continue;
      let offset = node.range[0];
      if (key !== undefined && length === path.length && isMap(node)) {
        const pair = node.items.find((item) => (item.key as Yaml.Scalar | null)?.value === key);
        const keyNode = pair?.key as Yaml.Node | undefined;
        if (keyNode?.range !== undefined && keyNode.range !== null) offset = keyNode.range[0];
      }
      const { line, col } = lines.linePos(offset);
      return ` line ${line} column ${col}`;
    }
    return '';
  };
}

function isMap(node: Yaml.Node): node is Yaml.YAMLMap<unknown, unknown> {
  return Array.isArray((node as { items?: unknown }).items) && 'getIn' in node && 'set' in node;
}

/** The dotted path of a setting: `spaces.0.memory`, `(top level)` for the file itself. */
function dotted(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(top level)' : path.map(String).join('.');
}

/** One line per problem of `issues` (an unknown key: one per key), each naming where and what to do. */
export function describeConfigIssues(
  issues: readonly z.core.$ZodIssue[],
  schema: z.core.$ZodType,
  origin: IssueOrigin,
): string[] {
  const locate = createLocate(origin.file);
  const where = (path: readonly PropertyKey[], key?: string): string => {
    const variable = origin.fromEnvironment.get(dotted(key === undefined ? path : [...path, key]));
    return variable ?? `${origin.file ?? 'environment'}${locate(path, key)}`;
  };
  return issues.flatMap((issue) => {
    if (issue.code !== 'unrecognized_keys') {
      return [`${where(issue.path)}: ${dotted(issue.path)}: ${issue.message}`];
    }
    const known = knownKeysAt(schema, issue.path);
    return issue.keys.map((key) => {
      const setting = dotted([...issue.path, key]);
      const near = nearestKey(key, known);
      const hint =
        near === undefined
          ? `the settings there are ${known.map((name) => `\`${name}\``).join(', ')}`
          : `did you mean \`${dotted([...issue.path, near])}\`?`;
      return `${where(issue.path, key)}: ${setting}: unknown setting; ${hint}`;
    });
  });
}
