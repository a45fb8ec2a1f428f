import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { PathEscapeError } from '../errors.js';

/**
 * Confinement of the paths an agent gives to its memory tools.
 *
 * A path is checked twice. First as text, strictly: a relative path of plain segments made of letters,
 * digits, space, `.`, `_` and `-`, already in Unicode NFKC form (so fullwidth dots and slashes, one-dot
 * leaders and other lookalikes never reach the filesystem), with no percent-encoding (single or double),
 * no backslash, no NUL or other control or invisible character, no `..`, `.` or empty segment, and no
 * segment that starts with a dot (hidden files, and dreamd's own state in `.dreamd/`, are not the
 * agent's). Then on disk: the real path of the memory directory is taken, the nearest existing ancestor
 * of the target is resolved with symlinks followed, and the result must stay inside the directory (a
 * sibling sharing the prefix, `memory-evil`, is outside) and outside any hidden directory.
 */

/** Longest path accepted, in characters. */
export const MAX_MEMORY_PATH_LENGTH = 512;
/** Deepest nesting accepted (segments). Memory is a handful of flat files; 8 leaves room for folders. */
export const MAX_MEMORY_PATH_DEPTH = 8;

/** Letters, digits, space and `._-` only: anything else (slash lookalikes, `%`, `\`, `:`, `~`) is refused. */
const SEGMENT_PATTERN = /^[\p{L}\p{M}\p{N} ._-]+$/u;

/** A path inside a memory directory, checked. */
export interface MemoryPath {
  /** The path as given, normalised to `/`-separated segments (`""` for the directory itself). */
  readonly relative: string;
  /** Absolute path on disk, with every existing symlinked ancestor resolved. */
  readonly absolute: string;
}

export interface ResolveMemoryPathOptions {
  /** Accept `""` (or `.`) meaning the memory directory itself. Default false. */
  readonly allowRoot?: boolean;
}

function refuse(requested: string, why: string): never {
  throw new PathEscapeError(
    `Refused memory path ${JSON.stringify(requested)}: ${why}. Give a relative path inside the memory directory, ` +
      'such as "preferences.md" or "notes/food.md".',
    requested,
  );
}

/**
 * Checks a requested path as text and returns its segments. Pure: no filesystem access.
 * @throws PathEscapeError when the path could leave the memory directory or reach hidden state.
 */
export function parseMemoryPath(requested: unknown, options: ResolveMemoryPathOptions = {}): string[] {
  if (typeof requested !== 'string') refuse(String(requested), 'the path must be a string');
  if (requested === '' || requested === '.') {
    if (options.allowRoot === true) return [];
    refuse(requested, 'the path is empty');
  }
  if (requested.length > MAX_MEMORY_PATH_LENGTH)
    refuse(requested, `longer than ${MAX_MEMORY_PATH_LENGTH} characters`);
  // Control characters (NUL included), format characters (zero-width, bidi overrides) and separators.
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(requested))
    refuse(requested, 'it contains a control or invisible character');
  if (requested.includes('\\')) refuse(requested, 'backslashes are not path separators here');
  if (requested.includes('%')) refuse(requested, 'percent-encoded characters are not accepted');
  if (requested.normalize('NFKC') !== requested) {
    refuse(requested, 'it contains Unicode compatibility characters (lookalikes of "." or "/")');
  }
  if (requested.startsWith('/') || path.isAbsolute(requested) || /^[A-Za-z]:/.test(requested)) {
    refuse(requested, 'absolute paths are not accepted');
  }
  const segments = requested.split('/');
  if (segments.length > MAX_MEMORY_PATH_DEPTH)
    refuse(requested, `deeper than ${MAX_MEMORY_PATH_DEPTH} levels`);
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..')
      refuse(requested, `the segment "${segment}" is not allowed`);
    if (segment.startsWith('.'))
      refuse(requested, 'hidden files and dreamd\'s ".dreamd" state are not for the agent');
    if (segment.endsWith('.') || segment.endsWith(' ') || segment.startsWith(' ')) {
      refuse(requested, 'a segment may not start with a space or end with a dot or space');
    }
    if (Buffer.byteLength(segment) > 255) refuse(requested, 'a segment is longer than 255 bytes');
    if (!SEGMENT_PATTERN.test(segment))
      refuse(requested, 'only letters, digits, space, ".", "_", "-" and "/" are allowed');
  }
  return segments;
}

function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root + path.sep);
}

function touchesHiddenSegment(root: string, candidate: string): boolean {
  return path
    .relative(root, candidate)
    .split(path.sep)
    .some((segment) => segment.startsWith('.'));
}

async function realPathOrUndefined(target: string): Promise<string | undefined> {
  try {
    return await realpath(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Resolves a path an agent gave to a memory tool against the memory directory, following symlinks.
 * For a target that does not exist yet, the real path of its nearest existing parent is checked.
 * A dangling symlink as the target is refused (writing through it would create a file wherever it points).
 * @throws PathEscapeError when the path, or where it really leads, is outside the directory or hidden.
 */
export async function resolveMemoryPath(
  memoryDir: string,
  requested: unknown,
  options: ResolveMemoryPathOptions = {},
): Promise<MemoryPath> {
  const segments = parseMemoryPath(requested, options);
  const shown = String(requested);
  const root = path.resolve(memoryDir);
  const realRoot = await realpath(root);
  const lexical = path.resolve(root, ...segments);
  if (!isInside(root, lexical)) refuse(shown, 'it leads outside the memory directory');

  // Walk up to the nearest existing ancestor and resolve it; the missing tail is appended unchanged.
  let existing = lexical;
  const missing: string[] = [];
  let real = await realPathOrUndefined(existing);
  while (real === undefined) {
    if (existing === root) refuse(shown, 'the memory directory does not exist');
    try {
      await lstat(existing);
      refuse(shown, 'it is a symlink whose target does not exist');
    } catch (error) {
      if (error instanceof PathEscapeError) throw error;
    }
    missing.unshift(path.basename(existing));
    existing = path.dirname(existing);
    real = await realPathOrUndefined(existing);
  }
  const absolute = path.join(real, ...missing);
  if (!isInside(realRoot, absolute)) refuse(shown, 'a symlink leads outside the memory directory');
  if (touchesHiddenSegment(realRoot, absolute))
    refuse(shown, 'a symlink leads into hidden state such as ".dreamd"');
  return { relative: segments.join('/'), absolute };
}
