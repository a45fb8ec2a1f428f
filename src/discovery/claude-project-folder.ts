import { join } from 'node:path';

/**
 * How Claude Code names a project's folder under `<home>/projects/`: every character of the path that is not
 * an ASCII letter or digit becomes `-` (`/home/me/my_repo` → `-home-me-my-repo`). A name longer than 200
 * characters is cut at 200 and given `-` and a hash of the whole path in base 36, so two long paths that
 * share their first 200 characters still differ. The npm build of Claude Code hashes with djb2 (below);
 * its native (Bun) build with Bun's own hash, which Node cannot compute: for a long path, the folder already
 * on disk that starts with the cut name is taken (see `claudeMemoryFolder`).
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

/** The name Claude Code gives the project folder of `path` (an absolute path, as Claude Code saw it). */
export function claudeProjectName(path: string): string {
  const name = path.replace(/[^a-zA-Z0-9]/g, '-');
  if (name.length <= CLAUDE_MAX_FOLDER_NAME) return name;
  return `${name.slice(0, CLAUDE_MAX_FOLDER_NAME)}-${Math.abs(djb2(path)).toString(36)}`;
}

/**
 * True when `folderName` is a name Claude Code gives `path`: the name itself or, for a long path, the cut name
 * with any hash (the native build's hash differs from djb2).
 */
export function isClaudeProjectNameOf(folderName: string, path: string): boolean {
  const name = path.replace(/[^a-zA-Z0-9]/g, '-');
  if (name.length <= CLAUDE_MAX_FOLDER_NAME) return folderName === name;
  return folderName.startsWith(`${name.slice(0, CLAUDE_MAX_FOLDER_NAME)}-`);
}

/**
 * The memory folder Claude Code reads for a repository: `<projects>/<name of its root>/memory`. For a long
 * root, a project folder on disk (in `existing`, the names under `<projects>`) that Claude Code made for it
 * wins over the djb2 name.
 */
export function claudeMemoryFolder(projectsDir: string, root: string, existing: readonly string[]): string {
  const name = claudeProjectName(root);
  if (name.length > CLAUDE_MAX_FOLDER_NAME) {
    const made = existing.filter((folder) => isClaudeProjectNameOf(folder, root));
    if (made.length === 1) return join(projectsDir, made[0]!, 'memory');
  }
  return join(projectsDir, name, 'memory');
}
