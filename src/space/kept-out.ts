/**
 * `.dreamd/kept-out.json`: the sessions of a space kept out of memory, each with why. A person's mark
 * (`dreamd sessions exclude`, reason `command`) stays until `dreamd sessions include` takes it off; a run
 * adds the sessions it finds with the person's marker (`marker`) or, with `keepOut.externalContext` on, a
 * web or MCP tool (`external-context`), so later scans pass them by without opening them. The scan looks the
 * marks up (`keptOutLookup`) and gives such a file the status `kept-out`: no run reads it, the gates do not
 * count it, and it never waits.
 *
 * Written whole to a temporary file and renamed (write-file-atomic), by a holder of the space's lock: the
 * command takes it, a run has it.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { KEPT_OUT_REASONS, type KeptOutLookup, type KeptOutMark } from '../core/kept-out.js';
import { MemoryFormatError } from '../errors.js';
import { KEPT_OUT_FILE, STATE_DIR, readTextIfExists } from './paths.js';

const KeptOutEntry = z.object({
  /** The file as the scan names it: relative to the sessions folder, or absolute in a space of sources. */
  file: z.string().min(1),
  /** The session id when known (the file was read, or the ledger has it). */
  sessionId: z.string().min(1).optional(),
  reason: z.enum(KEPT_OUT_REASONS),
  detail: z.string(),
  /** ISO time the mark was made. */
  at: z.string(),
});
export type KeptOutEntry = z.infer<typeof KeptOutEntry>;

const KeptOutList = z.object({ version: z.literal(1), sessions: z.array(KeptOutEntry) });
export type KeptOutList = z.infer<typeof KeptOutList>;

/** The marks of a memory folder; none when there is no file. Throws MemoryFormatError naming the fix. */
export async function readKeptOut(memoryDir: string): Promise<KeptOutList> {
  const file = path.join(memoryDir, KEPT_OUT_FILE);
  const text = await readTextIfExists(file);
  if (text === null) return { version: 1, sessions: [] };
  try {
    return KeptOutList.parse(JSON.parse(text));
  } catch (error) {
    const detail = error instanceof z.ZodError ? z.prettifyError(error).split('\n')[0] : String(error);
    throw new MemoryFormatError(
      `${file}: unreadable (${detail}); fix the JSON, or delete the file (every session is then let in again, ` +
        'and `dreamd sessions exclude` marks them anew)',
      KEPT_OUT_FILE,
      { cause: error },
    );
  }
}

/** Which marks are in force: an `external-context` mark only while `keepOut.externalContext` is on. */
export function keptOutLookup(
  list: KeptOutList,
  settings: { readonly externalContext: boolean },
): KeptOutLookup {
  const byFile = new Map<string, KeptOutMark>();
  const byId = new Map<string, KeptOutMark>();
  for (const entry of list.sessions) {
    if (entry.reason === 'external-context' && !settings.externalContext) continue;
    const mark = { reason: entry.reason, detail: entry.detail };
    // A person's mark is said first: it is the one `include` takes off.
    if (!byFile.has(entry.file) || entry.reason === 'command') byFile.set(entry.file, mark);
    if (entry.sessionId !== undefined && (!byId.has(entry.sessionId) || entry.reason === 'command'))
      byId.set(entry.sessionId, mark);
  }
  return {
    get: (file, sessionId) => byFile.get(file) ?? (sessionId === undefined ? undefined : byId.get(sessionId)),
  };
}

async function writeKeptOut(memoryDir: string, list: KeptOutList): Promise<void> {
  await mkdir(path.join(memoryDir, STATE_DIR), { recursive: true });
  await writeFileAtomic(path.join(memoryDir, KEPT_OUT_FILE), `${JSON.stringify(list, null, 2)}\n`);
}

function sameSession(entry: KeptOutEntry, mark: Pick<KeptOutEntry, 'file' | 'sessionId'>): boolean {
  return entry.file === mark.file || (mark.sessionId !== undefined && entry.sessionId === mark.sessionId);
}

/** Adds marks (a mark of the same session and reason is replaced). The caller holds the space's lock. */
export async function addKeptOut(memoryDir: string, marks: readonly KeptOutEntry[]): Promise<void> {
  if (marks.length === 0) return;
  const list = await readKeptOut(memoryDir);
  const kept = list.sessions.filter(
    (entry) => !marks.some((mark) => mark.reason === entry.reason && sameSession(entry, mark)),
  );
  await writeKeptOut(memoryDir, { version: 1, sessions: [...kept, ...marks] });
}

/**
 * Takes a person's mark (`command`) off a session and returns it; the marks the session itself earned
 * (`marker`, `external-context`) stay. Undefined when there was no such mark. The caller holds the lock.
 */
export async function removeCommandMark(
  memoryDir: string,
  session: Pick<KeptOutEntry, 'file' | 'sessionId'>,
): Promise<KeptOutEntry | undefined> {
  const list = await readKeptOut(memoryDir);
  const removed = list.sessions.find((entry) => entry.reason === 'command' && sameSession(entry, session));
  if (removed === undefined) return undefined;
  await writeKeptOut(memoryDir, { version: 1, sessions: list.sessions.filter((entry) => entry !== removed) });
  return removed;
}
