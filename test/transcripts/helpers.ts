import { stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Space, TranscriptFormat } from '../../src/config/schema.js';
import { readSession, type ReadSessionOptions } from '../../src/transcripts/read-session.js';
import { scanSessions, type ScanResult } from '../../src/transcripts/scan-sessions.js';
import type { Session } from '../../src/transcripts/types.js';
import type { LedgerEntry, LedgerLookup } from '../../src/memory/types.js';

/** The real Claude Code fixtures (copied from shared/fixtures; read only, never edited). */
export const CLAUDE_CODE_FIXTURES = fileURLToPath(new URL('../fixtures/claude-code/', import.meta.url));
/** The hostile transcript corpus and its expected outcomes. */
export const HOSTILE_FIXTURES = fileURLToPath(new URL('../fixtures/hostile/', import.meta.url));
/** The example sessions shipped in the repository. */
export const EXAMPLE_SESSIONS = fileURLToPath(new URL('../../sessions/', import.meta.url));

export const FIXTURE = {
  helloWorld: 'claude-reliability__hello-world-script.jsonl',
  summaryTask: 'entireio-cli__e2-775d4606d9__summary-task.jsonl',
  compactBoundary: 'entireio-cli__a6-e4c2a0fbd1__compact-boundary.jsonl',
} as const;

/** Generous cap for tests that are not about size. */
export const MAX_BYTES = 64 * 1024 * 1024;

/**
 * Reads session file `name` of `sessionsDir` as a transcript of `format`, under the generous MAX_BYTES cap
 * unless `options` say otherwise (a start message, smaller caps…).
 */
export function readTranscript(
  format: TranscriptFormat,
  sessionsDir: string,
  name: string,
  options: Partial<Omit<ReadSessionOptions, 'format' | 'sessionsDir'>> = {},
): Promise<Session> {
  return readSession(name, { format, sessionsDir, maxBytes: MAX_BYTES, ...options });
}

/** Writes a file and sets its mtime (and atime) to `mtime`. */
export async function writeWithMtime(path: string, data: string | Buffer, mtime: Date): Promise<void> {
  await writeFile(path, data);
  await utimes(path, mtime, mtime);
}

/** An in-memory ledger, as the memory module's ledger exposes it to the scanner. */
export function createLedger(
  entries: readonly LedgerEntry[] = [],
): LedgerLookup & { entries: LedgerEntry[] } {
  const list = [...entries];
  return {
    entries: list,
    get: (sessionId) => list.find((entry) => entry.sessionId === sessionId),
    getByFile: (file) => list.find((entry) => entry.file === file),
  };
}

export function ledgerEntry(
  fields: Pick<LedgerEntry, 'sessionId' | 'file' | 'messageCount' | 'size' | 'mtimeMs'>,
): LedgerEntry {
  return { ...fields, runId: 'run-test', consolidatedAt: '2026-11-20T00:00:00.000Z' };
}

/**
 * A ledger holding one session, consolidated with `messageCount` messages when its file (`file`, relative to
 * the sessions folder `dir`) had the size and mtime it has on disk now.
 */
export async function ledgerOfFileAsItIs(
  dir: string,
  fields: Pick<LedgerEntry, 'sessionId' | 'file' | 'messageCount'>,
): Promise<LedgerLookup & { entries: LedgerEntry[] }> {
  const { size, mtimeMs } = await stat(join(dir, fields.file));
  return createLedger([ledgerEntry({ ...fields, size, mtimeMs })]);
}

export function nativeSpace(sessionsDir: string): Space {
  return { id: 'test', sessionsDir, memoryDir: join(sessionsDir, '..', 'memory'), format: 'native' };
}

export function claudeCodeSpace(sessionsDir: string): Space {
  return { id: 'test-cc', sessionsDir, memoryDir: join(sessionsDir, 'memory'), format: 'claude-code' };
}

/** A minimal native transcript document as text. */
export function nativeDocument(fields: { id?: string; endedAt?: string; messages?: unknown[] } = {}): string {
  return JSON.stringify({
    ...(fields.id === undefined ? {} : { id: fields.id }),
    startedAt: '2026-11-20T10:00:00Z',
    ...(fields.endedAt === undefined ? {} : { endedAt: fields.endedAt }),
    messages: fields.messages ?? [
      { role: 'user', content: 'I prefer tea.' },
      { role: 'assistant', content: 'Noted.' },
    ],
  });
}

/** The public Codex CLI rollout slices (see test/fixtures/codex/SOURCES.md; read only, never edited). */
export const CODEX_FIXTURES = fileURLToPath(new URL('../fixtures/codex/', import.meta.url));

export const CODEX_FIXTURE = {
  head: 'pinouchon-rtchess__rollout-head.jsonl',
  tail: 'pinouchon-rtchess__rollout-tail.jsonl',
  twoPlusTwo: 'agentcmd__exec-what-is-2-plus-2.jsonl',
  toolCalls: 'agentcmd__exec-tool-calls.jsonl',
} as const;

/** What the Codex reader leaves out of CODEX_FIXTURE.head, by kind: its `Session.dropped`. */
export const CODEX_HEAD_DROPPED = {
  session_meta: 1,
  'injected context': 1,
  event_msg: 4,
  turn_context: 2,
  'ghost_snapshot item': 1,
  reasoning: 1,
};

export function codexSpace(sessionsDir: string): Space {
  return { id: 'test-codex', sessionsDir, memoryDir: join(sessionsDir, '..', 'memory'), format: 'codex' };
}

/** The clock of the scan tests: sessions are dated against it. */
export const NOW = new Date('2026-11-26T12:00:00Z');

/** `minutes` before NOW. */
export const minutesAgo = (minutes: number): Date => new Date(NOW.getTime() - minutes * 60_000);

const SPACES: Record<TranscriptFormat, (sessionsDir: string) => Space> = {
  native: nativeSpace,
  'claude-code': claudeCodeSpace,
  codex: codexSpace,
};

/** A scan of `dir` as a space of `format` at NOW, sessions quiet after 30 minutes. */
export function scanAt(
  dir: string,
  ledger: LedgerLookup = createLedger(),
  format: TranscriptFormat = 'native',
): Promise<ScanResult> {
  return scanSessions({
    space: SPACES[format](dir),
    ledger,
    now: NOW,
    quietMinutes: 30,
    maxBytes: MAX_BYTES,
  });
}
