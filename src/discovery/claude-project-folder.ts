import { join } from 'node:path';

/**
 * How Claude Code names a project's folder under `<home>/projects/` (its `sanitizePath`): every character of
 * the path that is not an ASCII letter or digit becomes `-` (`/home/me/my_repo` → `-home-me-my-repo`). A name
 * longer than 200 characters is cut at 200 and given `-` and a hash of the whole path in base 36, so two long
 * paths that share their first 200 characters still differ. Which hash depends on the build that ran: the npm
 * build (Node) uses djb2, the native build (Bun) `Bun.hash`, which is Zig's wyhash. A long path therefore has
 * two exact names, and a folder belongs to a path only under one of them: never by its first 200 characters.
 */
export const CLAUDE_MAX_FOLDER_NAME = 200;

/** djb2 over UTF-16 code units, as a signed 32-bit integer (Claude Code's `djb2Hash`). */
export function djb2(text: string): number {
  let hash = 0;
  for (let index = 0; index < text.length; index++) {
    hash = ((hash << 5) - hash + text.charCodeAt(index)) | 0;
  }
  return hash;
}

const WYHASH_SECRET = [0xa0761d6478bd642fn, 0xe7037ed1a0b428dbn, 0x8ebc6af09c88c6e3n, 0x589965cc75374cc3n];
const LOW_64 = (1n << 64n) - 1n;

/** The 128-bit product of two 64-bit words, as its low and high halves. */
function multiply(left: bigint, right: bigint): [bigint, bigint] {
  const product = left * right;
  return [product & LOW_64, (product >> 64n) & LOW_64];
}

function mix(left: bigint, right: bigint): bigint {
  const [low, high] = multiply(left, right);
  return low ^ high;
}

/** `count` bytes (at most 8) from `at`, little-endian. */
function readLittle(bytes: Uint8Array, at: number, count: number): bigint {
  let value = 0n;
  for (let index = count - 1; index >= 0; index--) value = (value << 8n) | BigInt(bytes[at + index]!);
  return value;
}

/**
 * Zig's `std.hash.Wyhash.hash` (wyhash final 4) of the string's UTF-8 bytes: what `Bun.hash(text)` returns, so
 * what Claude Code's native build hashes a long path with. Checked against Zig's test vectors and Bun's
 * documented `Bun.hash("some data here")` (`test/discovery/claude-project-folder.test.ts`).
 */
export function wyhash(text: string, seed = 0n): bigint {
  const bytes = Buffer.from(text, 'utf8');
  const length = bytes.length;
  const state = [0n, 0n, 0n];
  state[0] = seed ^ mix(seed ^ WYHASH_SECRET[0]!, WYHASH_SECRET[1]!);
  state[1] = state[0];
  state[2] = state[0];
  let a: bigint;
  let b: bigint;
  if (length <= 16) {
    if (length >= 4) {
      const end = length - 4;
      const quarter = (length >> 3) << 2;
      a = (readLittle(bytes, 0, 4) << 32n) | readLittle(bytes, quarter, 4);
      b = (readLittle(bytes, end, 4) << 32n) | readLittle(bytes, end - quarter, 4);
    } else if (length > 0) {
      a = (BigInt(bytes[0]!) << 16n) | (BigInt(bytes[length >> 1]!) << 8n) | BigInt(bytes[length - 1]!);
      b = 0n;
    } else {
      a = 0n;
      b = 0n;
    }
  } else {
    let offset = 0;
    if (length >= 48) {
      for (; offset + 48 < length; offset += 48) {
        for (let lane = 0; lane < 3; lane++) {
          const at = offset + 16 * lane;
          state[lane] = mix(
            readLittle(bytes, at, 8) ^ WYHASH_SECRET[lane + 1]!,
            readLittle(bytes, at + 8, 8) ^ state[lane]!,
          );
        }
      }
      state[0] = state[0] ^ state[1] ^ state[2];
    }
    for (; offset + 16 < length; offset += 16) {
      state[0] = mix(
        readLittle(bytes, offset, 8) ^ WYHASH_SECRET[1]!,
        readLittle(bytes, offset + 8, 8) ^ state[0],
      );
    }
    a = readLittle(bytes, length - 16, 8);
    b = readLittle(bytes, length - 8, 8);
  }
  [a, b] = multiply(a ^ WYHASH_SECRET[1]!, b ^ state[0]);
  return mix(a ^ WYHASH_SECRET[0]! ^ BigInt(length), b ^ WYHASH_SECRET[1]!);
}

function sanitized(path: string): string {
  return path.replace(/[^a-zA-Z0-9]/g, '-');
}

/** The name Claude Code's npm build gives the project folder of `path` (an absolute path, as Claude Code saw it). */
export function claudeProjectName(path: string): string {
  const name = sanitized(path);
  if (name.length <= CLAUDE_MAX_FOLDER_NAME) return name;
  return `${name.slice(0, CLAUDE_MAX_FOLDER_NAME)}-${Math.abs(djb2(path)).toString(36)}`;
}

/** The name Claude Code's native build gives it: the same, but a long path's hash is `Bun.hash`. */
export function claudeNativeProjectName(path: string): string {
  const name = sanitized(path);
  if (name.length <= CLAUDE_MAX_FOLDER_NAME) return name;
  return `${name.slice(0, CLAUDE_MAX_FOLDER_NAME)}-${wyhash(path).toString(36)}`;
}

/** Every name Claude Code gives the folder of `path`: one, or for a long path the npm build's and the native one's. */
export function claudeProjectNames(path: string): readonly string[] {
  const name = claudeProjectName(path);
  return name.length <= CLAUDE_MAX_FOLDER_NAME ? [name] : [name, claudeNativeProjectName(path)];
}

/** True when `folderName` is exactly a name Claude Code gives `path` (either build's). */
export function isClaudeProjectNameOf(folderName: string, path: string): boolean {
  const name = sanitized(path);
  if (name.length <= CLAUDE_MAX_FOLDER_NAME) return folderName === name;
  // The hashes are computed only for a folder whose first 200 characters already match.
  if (!folderName.startsWith(`${name.slice(0, CLAUDE_MAX_FOLDER_NAME)}-`)) return false;
  return claudeProjectNames(path).includes(folderName);
}

/**
 * The memory folder Claude Code reads for a repository: `<projects>/<name of its root>/memory`. For a long
 * root, the native build's folder wins when it is on disk (in `existing`, the names under `<projects>`) and
 * the npm build's is not; otherwise the npm build's name.
 */
export function claudeMemoryFolder(projectsDir: string, root: string, existing: readonly string[]): string {
  const [name, native] = claudeProjectNames(root);
  if (native !== undefined && !existing.includes(name!) && existing.includes(native)) {
    return join(projectsDir, native, 'memory');
  }
  return join(projectsDir, name!, 'memory');
}
