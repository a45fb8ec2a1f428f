/**
 * The agent's side of the one memory store: a note the agent saves becomes a fact of the topic file of its
 * type, written as consolidation writes its facts (`space/note-commit.ts`: same entry format, same id
 * generator, dreamd's block of `MEMORY.md` rebuilt within the index limits, one staged transaction), after the
 * same screen (`note-screen.ts`: secrets, redaction markers, instructions, and a rule or preference the agent
 * read in a tool result of the session rather than heard from the user). A note the screen holds
 * back goes to the quarantine with its reason and is refused. Forgetting a fact is `memory forget`'s
 * transaction (`space/forget.ts`), so rollback can undo either.
 *
 * Every write takes the space's lock (`space/lock.ts`) as a consolidation run does, so a note saved while a
 * run is in flight waits for the run to commit and is then written once on top of what it wrote. The lock is
 * tried every `lockRetryMs` for up to `lockWaitMs`; after that the note is refused with who holds the lock, and
 * nothing is written. Claude Code's `.consolidate-lock` is checked first (`requireClaudeCodeLockFree`).
 */
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { redactSecrets } from '../digest/redact-secrets.js';
import { LockBusyError } from '../errors.js';
import { FactNotFoundError, NotDreamdsFactError, forgetFact } from '../space/forget.js';
import { newFactId } from '../memory/fact-id.js';
import { loadMemory } from '../space/memory-dir.js';
import { commitNote } from '../space/note-commit.js';
import { DEFAULT_LOCK_STALE_MS } from '../space/recover-space.js';
import { lockOwner, withSpaceLocks } from '../space/space-locks.js';
import { MEMORY_TYPES, TOPIC_FILES, type Fact, type FactType } from '../memory/types.js';
import { screenNote, type ConversationMessage } from './note-screen.js';
import { requireClaudeCodeLockFree } from './memory-rules.js';
import { ToolInputError } from './tool.js';

/** How long a note waits for a consolidation run that holds the lock, in milliseconds (default 30 s). */
export const DEFAULT_NOTE_LOCK_WAIT_MS = 30_000;
/** Milliseconds between two tries of a busy lock (default 250). */
export const DEFAULT_NOTE_LOCK_RETRY_MS = 250;

export interface NoteStoreOptions {
  /** The space's memory directory. */
  readonly memoryDir: string;
  /** Space id for run records and messages. Default: the memory directory's name. */
  readonly spaceId?: string;
  /** Clock for the `observed` / `updated` dates and run ids. Default `() => new Date()`. */
  readonly now?: () => Date;
  /** Session id the notes come from (the fact's `sources`). Default: none. */
  readonly source?: string;
  /** Run records kept (`history.keepRuns`). Default 200, the config's default. */
  readonly keepRuns?: number;
  /** A lock whose heartbeat is older than this is stale (`limits.lockStaleMinutes`). Default 10 minutes. */
  readonly lockStaleMs?: number;
  /** See {@link DEFAULT_NOTE_LOCK_WAIT_MS}. */
  readonly lockWaitMs?: number;
  /** See {@link DEFAULT_NOTE_LOCK_RETRY_MS}. */
  readonly lockRetryMs?: number;
}

/** A note as the agent gives it. */
export interface NoteInput {
  readonly type: FactType;
  readonly title: string;
  readonly body: string;
  readonly why?: string | undefined;
  readonly howToApply?: string | undefined;
  /** Id of a fact this note rewrites (same subject): the fact keeps its id and gets the new text. */
  readonly replaces?: string | undefined;
}

export type NoteOutcome =
  /** Written (or, when its topic file cannot be written now, waiting in `.dreamd/pending.json`). */
  | {
      readonly kind: 'saved';
      readonly fact: Fact;
      readonly replaced: boolean;
      readonly pending: boolean;
      /** The file it was written to: its topic file, or a file of its own in a Claude Code folder. */
      readonly file: string;
    }
  /** An active fact of the same type already says the same: nothing written. */
  | { readonly kind: 'known'; readonly fact: Fact }
  /** Held back by the screen, with its reason: quarantined, not in memory. */
  | { readonly kind: 'held'; readonly reason: string };

export interface NoteStore {
  /**
   * Saves a note. `session` is the session so far (Anthropic-shaped messages): a preference or rule whose words
   * the agent read in a tool result of it is held back, as transcripts' facts are (`note-screen.ts`). Without
   * it only the note's own text is screened.
   */
  save(note: NoteInput, session?: readonly ConversationMessage[]): Promise<NoteOutcome>;
  /** Removes a fact (an agent's note or any other of dreamd's) and records it as forgotten. */
  forget(id: string): Promise<Fact>;
}

function optionalText(text: string | undefined): string | undefined {
  const trimmed = text?.trim() ?? '';
  return trimmed === '' ? undefined : trimmed;
}

/** Case, spacing and end punctuation aside: the same words say the same thing. */
function sameWords(text: string): string {
  return text
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .replace(/[\s.!。]+$/u, '')
    .trim();
}

/** The store's options with their defaults filled in. */
interface NoteSettings {
  readonly memoryDir: string;
  readonly now: () => Date;
  readonly spaceId: string;
  readonly waitMs: number;
  readonly retryMs: number;
  readonly keepRuns: number;
  readonly lockStaleMs: number | undefined;
  readonly source: string | undefined;
}

/** Runs `action` holding the space's lock, after finishing any transaction a crashed run left behind. */
async function withLock<T>(settings: NoteSettings, action: () => Promise<T>): Promise<T> {
  const { memoryDir, spaceId, waitMs, retryMs } = settings;
  await requireClaudeCodeLockFree(memoryDir);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      // Claude Code's lock was checked free above, with the agent's own message; it is not taken.
      return await withSpaceLocks(
        { id: spaceId, memoryDir },
        {
          owner: lockOwner('agent note'),
          staleMs: settings.lockStaleMs ?? DEFAULT_LOCK_STALE_MS,
          claudeCode: false,
        },
        action,
      );
    } catch (error) {
      if (!(error instanceof LockBusyError)) throw error;
      if (Date.now() + retryMs > deadline) {
        throw new ToolInputError(
          `Memory is being written by someone else right now (${error.message}); waited ${Math.round(waitMs / 1000)} s, ` +
            'memory was not changed. Try again in a minute, or tell the user what you meant to save.',
        );
      }
      await delay(retryMs);
    }
  }
}

/** A note as it is saved: trimmed, with why and how to apply kept only for the types that have them. */
interface CleanNote {
  readonly type: FactType;
  readonly title: string;
  readonly body: string;
  readonly why: string | undefined;
  readonly howToApply: string | undefined;
  readonly replaces: string | undefined;
}

/** The note trimmed; a note without a title or a body is refused. */
function cleanNote(note: NoteInput): CleanNote {
  const title = note.title.replace(/\s+/gu, ' ').trim();
  const body = note.body.trim();
  if (title === '' || body === '') throw new ToolInputError('A note needs a title and a body.');
  const structured = MEMORY_TYPES[note.type].structured;
  const why = structured ? optionalText(note.why) : undefined;
  const howToApply = structured ? optionalText(note.howToApply) : undefined;
  return { type: note.type, title, body, why, howToApply, replaces: note.replaces };
}

/** Puts a note the screen held back in the quarantine, its secrets redacted, with the reason. */
async function holdNote(
  settings: NoteSettings,
  note: CleanNote,
  reason: string,
  today: string,
): Promise<void> {
  const { title, body, why, howToApply } = note;
  await commitNote(
    settings.memoryDir,
    {
      kind: 'held',
      entry: {
        title: redactSecrets(title).text,
        text: redactSecrets([body, why ?? '', howToApply ?? ''].join('\n').trim()).text,
        reason: `note of the agent (write_memory): ${reason}`,
        session: settings.source ?? 'write_memory',
        date: today,
      },
    },
    { spaceId: settings.spaceId, now: settings.now, keepRuns: settings.keepRuns },
  );
}

/**
 * The fact a note rewrites (refused when it is not an active fact of dreamd's), or the active fact of its type
 * that already says the same.
 */
function noteTarget(
  active: readonly Fact[],
  note: CleanNote,
): { previous?: Fact | undefined; known?: Fact | undefined } {
  if (note.replaces === undefined)
    return {
      known: active.find((fact) => fact.type === note.type && sameWords(fact.body) === sameWords(note.body)),
    };
  const previous = active.find((fact) => fact.id === note.replaces);
  if (previous === undefined)
    throw new ToolInputError(`No active fact ${note.replaces}: read MEMORY.md for the ids.`);
  if (previous.owner === 'other' || previous.editedByHand) {
    throw new ToolInputError(
      `${previous.id} was written ${previous.file === undefined ? 'by hand' : `in ${previous.file}`}, by a person or another tool: ` +
        'it is not rewritten. Save a new note without "replaces".',
    );
  }
  return { previous };
}

/** The fact a note becomes: a new one, or the one it rewrites with its id, first date and sources kept. */
function noteFact(
  note: CleanNote,
  previous: Fact | undefined,
  sources: readonly string[],
  today: string,
): Fact {
  return {
    id: previous?.id ?? newFactId(),
    type: note.type,
    title: note.title,
    body: note.body,
    why: note.why,
    howToApply: note.howToApply,
    observed: previous?.observed ?? today,
    updated: today,
    sources: [...new Set([...(previous?.sources ?? []), ...sources])].sort(),
    status: 'active',
    supersededBy: undefined,
    supersededOn: undefined,
    editedByHand: false,
  };
}

/** Saves a note under the space's lock: screened, then held back, known already, or written. */
async function saveNote(
  settings: NoteSettings,
  input: NoteInput,
  session?: readonly ConversationMessage[],
): Promise<NoteOutcome> {
  const { memoryDir, spaceId, now, keepRuns } = settings;
  const today = now().toISOString().slice(0, 10);
  const note = cleanNote(input);
  const sources = settings.source === undefined ? [] : [settings.source];
  return withLock(settings, async () => {
    const reason = screenNote(
      {
        type: note.type,
        title: note.title,
        text: [note.body, note.why ?? '', note.howToApply ?? ''].join('\n').trim(),
      },
      session,
    );
    if (reason !== undefined) {
      await holdNote(settings, note, reason, today);
      return { kind: 'held', reason };
    }
    const loaded = await loadMemory(memoryDir);
    const active = loaded.facts.filter((fact) => fact.status === 'active');
    const { previous, known } = noteTarget(active, note);
    if (known !== undefined) return { kind: 'known', fact: known };
    const fact = noteFact(note, previous, sources, today);
    if (previous !== undefined && previous.type !== note.type) {
      throw new ToolInputError(
        `${previous.id} is a ${previous.type} fact (${TOPIC_FILES[previous.type]}); a rewrite keeps its type.`,
      );
    }
    const committed = await commitNote(memoryDir, { kind: 'fact', fact }, { spaceId, now, keepRuns });
    return {
      kind: 'saved',
      fact,
      replaced: previous !== undefined,
      pending: committed.pending,
      file: committed.file ?? TOPIC_FILES[fact.type],
    };
  });
}

/** The store of one space's memory: notes saved and facts forgotten under the space's lock. */
export function createNoteStore(options: NoteStoreOptions): NoteStore {
  const memoryDir = path.resolve(options.memoryDir);
  const settings: NoteSettings = {
    memoryDir,
    now: options.now ?? (() => new Date()),
    spaceId: options.spaceId ?? path.basename(memoryDir),
    waitMs: options.lockWaitMs ?? DEFAULT_NOTE_LOCK_WAIT_MS,
    retryMs: options.lockRetryMs ?? DEFAULT_NOTE_LOCK_RETRY_MS,
    keepRuns: options.keepRuns ?? 200,
    lockStaleMs: options.lockStaleMs,
    source: options.source,
  };

  function forget(id: string): Promise<Fact> {
    return withLock(settings, async () => {
      try {
        return (await forgetFact(memoryDir, id, { spaceId: settings.spaceId, now: settings.now })).fact;
      } catch (error) {
        if (error instanceof FactNotFoundError)
          throw new ToolInputError(`No fact ${id} in memory: read MEMORY.md for the ids.`);
        if (error instanceof NotDreamdsFactError) throw new ToolInputError(error.message);
        throw error;
      }
    });
  }

  return { save: (note, session) => saveNote(settings, note, session), forget };
}
