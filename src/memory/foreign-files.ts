/**
 * Everything in the folder is memory: the Markdown files dreamd did not write (Claude Code's own memories,
 * a person's notes, another tool's files) are read as facts of owner `other`. dreamd shows them to the model,
 * finds them in search, lists them in its index block, and never edits, moves or deletes them.
 *
 * Walked: `*.md` files in the memory folder and its sub-folders (at most {@link MAX_DEPTH} deep), except
 * dreamd's own files (`MEMORY.md`, the topic files), hidden entries (`.dreamd/`, `.git/`) and `README.md`
 * (it documents the folder; it is not a memory). Symlinks to files inside the folder are read; links that
 * lead out of it are reported and skipped. The lines of `MEMORY.md` itself are read in `index-file-facts.ts`.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { parseMemoryFile } from './claude-code-file.js';
import type { Fact } from './types.js';
import { readMemoryFile } from './read-memory-file.js';

/** Deepest sub-folder walked (the memory tools write notes like `notes/food.md`). */
const MAX_DEPTH = 4;
/** A file that documents the folder (or a sub-folder) itself: `README.md`, in any case. Not a memory. */
export function isFolderReadme(relative: string): boolean {
  return (relative.split('/').at(-1) ?? relative).toLowerCase() === 'readme.md';
}

/** Most files read: a memory folder with more is not a memory folder; the rest are reported. */
export const MAX_FOREIGN_FILES = 2_000;

export interface ForeignFiles {
  readonly facts: readonly Fact[];
  readonly problems: readonly { readonly file: string; readonly reason: string }[];
  /** Bytes of every file read, by relative path. */
  readonly originals: ReadonlyMap<string, string>;
  /** Files `claim` took as dreamd's own (not read as others' facts), with their text. */
  readonly claimed: ReadonlyMap<string, string>;
}

async function listMarkdown(memoryDir: string, isOwn: (relative: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relativeDir: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH) return;
    const entries = await readdir(path.join(memoryDir, relativeDir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name.startsWith('.')) continue;
      const relative = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) await walk(relative, depth + 1);
      else if (
        (entry.isFile() || entry.isSymbolicLink()) &&
        entry.name.toLowerCase().endsWith('.md') &&
        !isFolderReadme(relative) &&
        !isOwn(relative)
      ) {
        found.push(relative);
      }
    }
  };
  await walk('', 1);
  return found;
}

/**
 * Read the files dreamd did not write as facts. `isOwn` names dreamd's own files by name (skipped here);
 * `claim` recognises dreamd's own files by their content (returned in `claimed`, not read as others' facts).
 */
export async function loadForeignFiles(
  memoryDir: string,
  isOwn: (relative: string) => boolean,
  claim: (relative: string, text: string) => boolean = () => false,
): Promise<ForeignFiles> {
  const names = await listMarkdown(memoryDir, isOwn);
  const problems: { file: string; reason: string }[] = [];
  if (names.length > MAX_FOREIGN_FILES) {
    problems.push({
      file: names[MAX_FOREIGN_FILES] ?? '',
      reason: `the memory folder holds ${names.length} Markdown files; dreamd reads the first ${MAX_FOREIGN_FILES} (by name). Move old notes out of the folder.`,
    });
  }
  const chosen = names.slice(0, MAX_FOREIGN_FILES);
  const reads = await Promise.all(chosen.map((relative) => readMemoryFile(memoryDir, relative)));
  const facts: Fact[] = [];
  const originals = new Map<string, string>();
  const claimed = new Map<string, string>();
  const byName = new Map<string, string[]>();
  for (const [position, relative] of chosen.entries()) {
    const read = reads[position];
    if (read === undefined || read.kind === 'absent') continue;
    if (read.kind === 'skipped') {
      problems.push({ file: relative, reason: read.reason });
      continue;
    }
    originals.set(relative, read.raw);
    if (read.readOnly.length === 0 && claim(relative, read.text)) {
      claimed.set(relative, read.text);
      continue;
    }
    const parsed = parseMemoryFile(read.text, { relative, modified: read.modified, owner: 'other' });
    for (const warning of parsed.warnings) problems.push({ file: relative, reason: warning });
    if (parsed.name !== undefined) byName.set(parsed.name, [...(byName.get(parsed.name) ?? []), relative]);
    facts.push(parsed.fact);
  }
  for (const [name, files] of byName) {
    if (files.length < 2) continue;
    problems.push({
      file: files[1] ?? '',
      reason: `${files.join(' and ')} have the same frontmatter name "${name}"; both are read, as separate memories. Rename one so Claude Code can tell them apart.`,
    });
  }
  return { facts, problems, originals, claimed };
}
