/**
 * The team's memory of a repository, as a space reads it from the repository's `AGENTS.md` (see
 * `memory/agents-block.ts`): the lines of dreamd's block that this space did not write are facts of the
 * repository (a teammate's dreamd wrote them, or a person), read with the rest of memory, shown by `memory show`,
 * given to the model, and kept by every run. A line of this space's own fact that a person edited is kept as
 * they wrote it. A teammate's line that says it replaced a fact of this space supersedes that fact here too,
 * so an update made in one clone reaches every clone's memory at its next run.
 *
 * How a person moves a fact between personal and shared memory is kept in `.dreamd/sharing.json`.
 */
import { lstat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { AGENTS_FILE, NO_SHARING, agentsEntries, agentsLine, type Sharing } from '../memory/agents-block.js';
import { splitIndexFile } from '../memory/index-block.js';
import { MAX_WRITABLE_FILE_BYTES } from '../memory/read-memory-file.js';
import { factFromFile, type Fact } from '../memory/types.js';
import { escapeInvisibleControls } from '../memory/visible-text.js';
import { readTextIfExists } from './paths.js';

/** A person's moves between personal and shared memory, in the space's state folder. */
export const SHARING_FILE = '.dreamd/sharing.json';

export interface TeamMemory {
  /** Facts of the block this space did not write, active. */
  readonly facts: readonly Fact[];
  /** Lines written back as they are, by fact id: a teammate's, and a person's edit of this space's line. */
  readonly keptLines: ReadonlyMap<string, string>;
  /** This space's active facts a teammate's newer fact replaced, with it. */
  readonly superseded: ReadonlyMap<string, Fact>;
  /** Why the file could not be read (it is then left alone); undefined when it was read or is missing. */
  readonly problem?: string;
}

const NO_TEAM: TeamMemory = { facts: [], keptLines: new Map(), superseded: new Map() };

/** A line's text without dreamd's closing comment: what a person reads and may edit. */
function readable(line: string): string {
  return line.replace(/ <!-- dreamd [^>]*-->$/u, '').trim();
}

/**
 * The team's facts in `text` (the repository's `AGENTS.md`), given every fact this space holds (`own`, any
 * status) and the ids of its archive. `modified` dates a line without dreamd's comment.
 */
export function teamMemoryOf(
  text: string | null,
  file: string,
  own: readonly Fact[],
  archivedIds: ReadonlySet<string>,
  modified: string,
): TeamMemory {
  const parts = splitIndexFile(text, { file, legacy: false });
  if (parts.kind !== 'block') return NO_TEAM;
  const ownById = new Map(own.map((fact) => [fact.id, fact]));
  const facts: Fact[] = [];
  const keptLines = new Map<string, string>();
  const superseded = new Map<string, Fact>();
  const seen = new Set<string>();
  for (const entry of agentsEntries(parts.blockLines)) {
    if (seen.has(entry.id)) continue;
    seen.add(entry.id);
    const mine = ownById.get(entry.id);
    if (mine !== undefined) {
      // This space's fact: dreamd writes its line again, unless a person changed the words.
      if (mine.status === 'active' && readable(entry.line) !== readable(agentsLine(mine)))
        keptLines.set(entry.id, entry.line);
      continue;
    }
    // A fact this space superseded and archived: a stale copy (a merge without the driver), not memory.
    if (archivedIds.has(entry.id)) continue;
    const date = entry.date ?? modified;
    const fact = factFromFile(
      {
        id: entry.id,
        type: entry.type,
        title: entry.title === '' ? entry.body.slice(0, 80) : entry.title,
        body: entry.body,
        why: undefined,
        howToApply: undefined,
      },
      {
        date,
        editedByHand: false,
        owner: 'other',
        file: AGENTS_FILE,
        description: entry.dreamds ? `${AGENTS_FILE}, from a teammate` : `${AGENTS_FILE}, written by hand`,
      },
    );
    facts.push(fact);
    keptLines.set(fact.id, entry.line);
    for (const replaced of entry.replaces) {
      const target = ownById.get(replaced);
      if (target?.status === 'active' && target.observed <= date) superseded.set(replaced, fact);
    }
  }
  return { facts, keptLines, superseded };
}

/** Read the repository's `AGENTS.md` for its team facts; a file dreamd does not write is read as no team. */
export async function readTeamMemory(
  file: string,
  own: readonly Fact[],
  archivedIds: ReadonlySet<string>,
): Promise<TeamMemory> {
  try {
    const stat = await lstat(file).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    });
    if (stat === undefined) return NO_TEAM;
    if (!stat.isFile() || stat.size > MAX_WRITABLE_FILE_BYTES) return NO_TEAM;
    const text = await readTextIfExists(file);
    return teamMemoryOf(text, file, own, archivedIds, stat.mtime.toISOString().slice(0, 10));
  } catch (error) {
    return {
      ...NO_TEAM,
      problem: `${file} cannot be read (${(error as Error).message}); its team facts are not read`,
    };
  }
}

const SharingFile = z.object({
  version: z.literal(1),
  shared: z.array(z.string()).default([]),
  personal: z.array(z.string()).default([]),
});

/** The space's sharing moves; none when the file is missing or unreadable. */
export async function readSharing(memoryDir: string): Promise<Sharing> {
  const text = await readTextIfExists(path.join(memoryDir, SHARING_FILE)).catch(() => null);
  if (text === null) return NO_SHARING;
  try {
    const parsed = SharingFile.parse(JSON.parse(text));
    return { shared: new Set(parsed.shared), personal: new Set(parsed.personal) };
  } catch {
    return NO_SHARING;
  }
}

/** Share a fact with the team (`shared: true`) or keep it personal; returns the moves after. */
export async function setSharing(memoryDir: string, id: string, shared: boolean): Promise<Sharing> {
  const before = await readSharing(memoryDir);
  const sharedIds = new Set(before.shared);
  const personalIds = new Set(before.personal);
  (shared ? sharedIds : personalIds).add(id);
  (shared ? personalIds : sharedIds).delete(id);
  const file = path.join(memoryDir, SHARING_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  const content = { version: 1, shared: [...sharedIds].sort(), personal: [...personalIds].sort() };
  await writeFileAtomic(file, `${escapeInvisibleControls(JSON.stringify(content, null, 2))}\n`);
  return { shared: sharedIds, personal: personalIds };
}
