/**
 * The ledger (`.dreamd/ledger.json`): which sessions are consolidated, and how far. It advances in the same
 * transaction as the memory it describes (see `commitMemoryChanges`), so a crash never records a session
 * whose facts are not on disk. Rollback takes the rolled-back run's sessions out again (see `rollback.ts`).
 */
import path from 'node:path';
import { z } from 'zod';
import { MemoryFormatError } from '../errors.js';
import type { LedgerEntry, LedgerLookup } from '../memory/types.js';
import { LEDGER_FILE } from './paths.js';
import { createParsedFileReader, readParsedOnce, type ParsedFileReader } from './parsed-files.js';

const LedgerEntrySchema = z.object({
  sessionId: z.string().min(1),
  file: z.string(),
  messageCount: z.number().int().nonnegative(),
  size: z.number().nonnegative(),
  mtimeMs: z.number(),
  runId: z.string(),
  consolidatedAt: z.string(),
  progress: z
    .object({ part: z.int().positive(), parts: z.int().positive(), totalMessages: z.int().nonnegative() })
    .optional(),
});

export const LedgerSchema = z.object({
  version: z.literal(1),
  sessions: z.record(z.string(), LedgerEntrySchema),
});
export type Ledger = z.infer<typeof LedgerSchema>;

export function emptyLedger(): Ledger {
  return { version: 1, sessions: {} };
}

export function parseLedger(text: string, file = LEDGER_FILE): Ledger {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new MemoryFormatError(
      `${file}: not valid JSON; restore it from a backup or delete it to consolidate every session again`,
      file,
      {
        cause: error,
      },
    );
  }
  const parsed = LedgerSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new MemoryFormatError(
      `${file}: ${issue?.path.join('.') || 'ledger'}: ${issue?.message ?? 'invalid'}; restore it or delete it to consolidate every session again`,
      file,
    );
  }
  return parsed.data;
}

/**
 * The ledger of a memory directory; empty when there is none. Throws MemoryFormatError when unreadable.
 * `parsed`: a reader that keeps the ledger it parsed while the file is unchanged (`createLedgerReader`; the
 * scheduler's tick), read-only.
 */
export async function readLedger(
  memoryDir: string,
  parsed: ParsedFileReader<Ledger> = readParsedOnce(ledgerOf),
): Promise<Ledger> {
  return (await parsed(path.join(memoryDir, LEDGER_FILE))) ?? emptyLedger();
}

/** A ledger file's text parsed, errors named by the ledger's name in the memory folder. */
function ledgerOf(text: string): Ledger {
  return parseLedger(text);
}

/** A reader of ledgers that parses each one again only when it changed (see `parsed-files.ts`). */
export function createLedgerReader(): ParsedFileReader<Ledger> {
  return createParsedFileReader(ledgerOf);
}

/** Read-only lookup by session id and by transcript file. */
export function createLedgerLookup(ledger: Ledger): LedgerLookup {
  const byFile = new Map<string, LedgerEntry>();
  for (const entry of Object.values(ledger.sessions)) byFile.set(entry.file, entry);
  return {
    get: (sessionId) => ledger.sessions[sessionId],
    getByFile: (file) => byFile.get(file),
  };
}

/** The ledger with these entries added or replaced (by session id). */
export function nextLedger(ledger: Ledger, entries: readonly LedgerEntry[]): Ledger {
  const sessions: Record<string, LedgerEntry> = { ...ledger.sessions };
  for (const entry of entries) sessions[entry.sessionId] = { ...entry };
  return { version: 1, sessions };
}

/** File content of a ledger: sessions sorted by id, so the same ledger gives the same bytes. */
export function serializeLedger(ledger: Ledger): string {
  const sessions: Record<string, LedgerEntry> = {};
  for (const id of Object.keys(ledger.sessions).sort()) {
    const entry = ledger.sessions[id];
    if (entry) sessions[id] = entry;
  }
  return `${JSON.stringify({ version: 1, sessions }, null, 2)}\n`;
}

/** Sessions partly consolidated (bigger than one run), as `session <id> part k of ~N` lines for status. */
export function sessionsInProgress(ledger: Ledger): string[] {
  return Object.values(ledger.sessions)
    .filter((entry) => entry.progress !== undefined)
    .sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1))
    .map((entry) => describeProgress(entry.sessionId, entry.messageCount, entry.progress!));
}

/** `session X part 2 of ~5 (messages 0–39,999 of 100,000 done)`. */
export function describeProgress(
  sessionId: string,
  nextMessage: number,
  progress: { readonly part: number; readonly parts: number; readonly totalMessages: number },
): string {
  const count = (value: number): string => value.toLocaleString('en-US');
  return `session ${sessionId} part ${progress.part} of ~${progress.parts} (messages 0–${count(nextMessage - 1)} of ${count(progress.totalMessages)} done)`;
}

/** Shortcut: the content of `.dreamd/ledger.json` after recording these entries. */
export function nextLedgerContent(ledger: Ledger, entries: readonly LedgerEntry[]): string {
  return serializeLedger(nextLedger(ledger, entries));
}
