import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { readFrontmatter } from '../memory/claude-code-file.js';
import { isFolderReadme } from '../memory/foreign-files.js';
import { loadMemory } from '../space/memory-dir.js';
import { PathEscapeError } from '../errors.js';
import { FACT_TYPES, TOPIC_FILES, type Fact, type FactType } from '../memory/types.js';
import { resolveMemoryPath } from './memory-path.js';
import { INDEX_FILE } from '../memory/memory-index.js';

/** What recall searches: a fact (curated, or written by the agent), or a note file (earlier versions wrote one per note). */
export interface RecallDocument {
  /** Fact id (`f-…`), or `note:<path>` for a note file. */
  readonly id: string;
  readonly title: string;
  readonly text: string;
  /** `YYYY-MM-DD`, or `""` when unknown. */
  readonly date: string;
  /** The fact's type (`user`, `feedback`, `project`, `reference`); none for a note file. */
  readonly type?: string;
  /** Ids of the sessions the fact came from; none for a note file. */
  readonly sources?: readonly string[];
  /** The message of those sessions the fact came from, when recall has the passages (see `createRecall`). */
  readonly passage?: string;
  /**
   * A fact a newer one replaced (superseded, or in the archive): searched only when a query asks about the
   * past ("where did I live before?", see `asksAboutThePast`).
   */
  readonly past?: boolean;
}

/** Deepest folder walked for notes, matching the memory tools' limit. */
const MAX_NOTE_DEPTH = 8;

const NoteFrontmatter = z.looseObject({
  name: z.string().optional(),
  description: z.string().optional(),
  updated: z.union([z.string(), z.date()]).optional(),
});

const CURATED = new Set<string>([INDEX_FILE, ...Object.values(TOPIC_FILES)]);

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Splits `---\nyaml\n---\nbody` into its parts; text without frontmatter is all body. Frontmatter that is
 * not strict YAML (an unquoted `: ` or ` #`) is read line by line, as dreamd reads every memory file.
 */
export function splitFrontmatter(text: string): { data: z.infer<typeof NoteFrontmatter>; body: string } {
  const { data, body } = readFrontmatter(text);
  const parsed = NoteFrontmatter.safeParse(data);
  return { data: parsed.success ? parsed.data : {}, body };
}

/**
 * Note files (written by earlier versions of the agent tools, or by hand): every `.md` file under the memory directory except the index, the topic files and
 * a `README.md` (it documents the folder), skipping hidden entries (`.dreamd/`) and symlinks (never followed:
 * they could lead to another space).
 */
export async function loadNotes(
  memoryDir: string,
  skip: ReadonlySet<string> = new Set(),
): Promise<RecallDocument[]> {
  const notes: RecallDocument[] = [];
  const walk = async (relativeDir: string, depth: number): Promise<void> => {
    if (depth > MAX_NOTE_DEPTH) return;
    const entries = await readdir(path.join(memoryDir, relativeDir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.') || entry.isSymbolicLink()) continue;
      const relative = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) await walk(relative, depth + 1);
      else if (
        entry.isFile() &&
        entry.name.endsWith('.md') &&
        !CURATED.has(relative) &&
        !skip.has(relative) &&
        !isFolderReadme(relative)
      ) {
        const text = await readIfExists(path.join(memoryDir, relative));
        if (text === undefined) continue;
        const { data, body } = splitFrontmatter(text);
        const updated = data.updated instanceof Date ? data.updated.toISOString() : data.updated;
        const date = updated ?? (await stat(path.join(memoryDir, relative))).mtime.toISOString();
        notes.push({
          id: `note:${relative}`,
          title: data.name ?? relative.replace(/\.md$/, ''),
          text: [data.description, body.trim()].filter(Boolean).join('\n'),
          date: date.slice(0, 10),
        });
      }
    }
  };
  await walk('', 1);
  return notes;
}

/**
 * Everything recall searches in one memory directory: the curated facts (`loadMemory`, which skips a topic
 * file it cannot parse), then the agent's notes. `asDocuments` keeps the active facts.
 */
export async function loadRecallDocuments(
  memoryDir: string,
  asDocuments: (facts: readonly Fact[]) => RecallDocument[],
): Promise<RecallDocument[]> {
  const exists = await stat(memoryDir).then(
    () => true,
    () => false,
  );
  if (!exists) return [];
  const { facts, factFiles, archived } = await loadMemory(memoryDir);
  // A topic file that is a symlink leading out of the directory (say, to another space) is not searched.
  const confined = new Set<FactType>();
  for (const type of FACT_TYPES) {
    const inside = await resolveMemoryPath(memoryDir, TOPIC_FILES[type]).then(
      () => true,
      (error: unknown) => {
        if (error instanceof PathEscapeError) return false;
        throw error;
      },
    );
    if (inside) confined.add(type);
  }
  // Files dreamd did not write are searched as notes (below), not twice; the facts written as lines of
  // MEMORY.md itself, and dreamd's one-fact files (the claude-code layout), are searched as facts.
  const ownFiles = new Set([...factFiles.values()].map((read) => read.file));
  return [
    ...asDocuments(
      facts.filter(
        (fact) =>
          (fact.file === undefined && confined.has(fact.type)) ||
          fact.file === INDEX_FILE ||
          (fact.file !== undefined && ownFiles.has(fact.file) && fact.owner !== 'other'),
      ),
    ),
    // The archive: facts that left the active files, for questions about the past.
    ...asDocuments(archived.map((entry) => entry.fact)),
    ...(await loadNotes(memoryDir, ownFiles)),
  ];
}
