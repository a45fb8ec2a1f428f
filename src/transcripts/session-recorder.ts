import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { ConfigError, DreamdError, TranscriptError, TranscriptErrorReason } from '../errors.js';
import { ContentBlock, SessionId, Timestamp, describeZodError } from './message-schema.js';

/**
 * The agent side of transcripts: writes one native session file (`<sessionsDir>/<id>.json`) as the
 * conversation happens, so dreamd can consolidate it later.
 *
 * States: open (after `createSessionRecorder`: the file exists with no messages) → open (each `append`
 * rewrites it) → ended (`end` wrote `endedAt`; `append` refuses). Every write goes to a temporary file that
 * is renamed over the session file, so after a crash at any instant the file is the previous or the new
 * valid JSON document, never a mix.
 */

/**
 * A message as an agent loop holds it: Anthropic-shaped (user/assistant, string or blocks) or OpenAI-shaped
 * (also `system` and `tool`, `content` null next to `tool_calls`), as the readers accept.
 */
export const RecordableMessage = z.looseObject({
  role: z.enum(['user', 'assistant', 'system', 'tool']),
  content: z.union([z.string(), z.array(ContentBlock), z.null()]),
  /** When the message happened; stamped with the recorder's clock when absent. */
  ts: Timestamp.optional(),
});
export type RecordableMessage = z.input<typeof RecordableMessage>;

/** Options of `createSessionRecorder`. */
export interface SessionRecorderOptions {
  /** Directory the session file is written to (created when missing). */
  readonly sessionsDir: string;
  /** Session id and file stem. Default: the start time and 4 random hex digits, `20261126-101500-a3f9`. */
  readonly id?: string | undefined;
  /** Name of the agent, stored as `agent`. */
  readonly agent?: string | undefined;
  /** Clock for `startedAt`, `ts` and `endedAt`. Default `() => new Date()`. */
  readonly now?: (() => Date) | undefined;
  /**
   * Continue the existing session `<id>.json` (it must exist and have been recorded by the same `agent`):
   * new messages are appended after its own and `endedAt` is cleared until `end`. Default false.
   */
  readonly resume?: boolean | undefined;
}

/** A recorded session as `resume` reads it back. */
const RecordedDocument = z.looseObject({
  id: z.string(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  agent: z.string().optional(),
  messages: z.array(z.unknown()),
});

/** A session being recorded. */
export interface SessionRecorder {
  readonly id: string;
  /** Absolute path of the session file. */
  readonly file: string;
  /** The messages of the file when it was resumed (empty for a new session). */
  readonly previousMessages: readonly unknown[];
  /** Adds a message (stamping `ts`) and saves the file atomically; resolves once it is on disk. */
  append(message: RecordableMessage): Promise<void>;
  /** Sets `endedAt` and saves. Calling it again changes nothing. */
  end(): Promise<void>;
}

interface NativeDocument {
  id: string;
  startedAt: string;
  endedAt?: string;
  agent?: string;
  messages: unknown[];
}

function defaultId(start: Date): string {
  const stamp = start.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

/**
 * Starts recording a session: creates `<sessionsDir>/<id>.json` with no messages and returns the recorder.
 * Refuses an id that is not a plain file name (ConfigError) and an id whose file already exists.
 */
export async function createSessionRecorder(options: SessionRecorderOptions): Promise<SessionRecorder> {
  const now = options.now ?? (() => new Date());
  const startedAt = now();
  const id = options.id ?? defaultId(startedAt);
  if (!SessionId.safeParse(id).success) {
    throw new ConfigError(
      `session id "${id}" cannot name a file: use letters, digits, ".", "_", ":", "@", "+" or "-"`,
      'id',
    );
  }
  const sessionsDir = resolve(options.sessionsDir);
  const file = join(sessionsDir, `${id}.json`);
  await mkdir(sessionsDir, { recursive: true });
  const exists = await lstat(file).then(
    () => true,
    () => false,
  );
  if (exists && options.resume !== true) {
    throw new ConfigError(
      `${file} already exists: a recorder never overwrites another session; choose another id`,
      'id',
    );
  }
  const document: NativeDocument =
    options.resume === true
      ? await readForResume(file, options.agent)
      : {
          id,
          startedAt: startedAt.toISOString(),
          ...(options.agent === undefined ? {} : { agent: options.agent }),
          messages: [],
        };
  const previousMessages = [...document.messages];
  delete document.endedAt;
  // Writes are chained so that concurrent appends land in call order and each save holds all before it.
  let saving: Promise<void> = Promise.resolve();
  const save = (): Promise<void> => {
    const snapshot = `${JSON.stringify(document, null, 2)}\n`;
    saving = saving
      .catch(() => undefined)
      .then(() => writeFileAtomic(file, snapshot, { encoding: 'utf8', fsync: true }));
    return saving;
  };
  await save();

  return {
    id,
    file,
    previousMessages,
    async append(message: RecordableMessage): Promise<void> {
      if (document.endedAt !== undefined) {
        throw new DreamdError(`${file}: session ${id} has ended; start a new recorder for a new session`);
      }
      const parsed = RecordableMessage.safeParse(message);
      if (!parsed.success) {
        throw new TranscriptError(
          `${file}: message not recorded, ${describeZodError(parsed.error)}; pass { role: 'user' | 'assistant' | 'system' | 'tool', content: string | blocks }`,
          file,
          TranscriptErrorReason.wrongShape,
        );
      }
      // The caller's object is stored as given (plus ts), so provider fields the reader ignores survive.
      document.messages.push({ ...message, ts: message.ts ?? now().toISOString() });
      await save();
    },
    async end(): Promise<void> {
      if (document.endedAt !== undefined) return saving;
      document.endedAt = now().toISOString();
      await save();
    },
  };
}

/** Reads a session to continue; refuses a missing file, one that does not parse, or another agent's. */
async function readForResume(file: string, agent: string | undefined): Promise<NativeDocument> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new ConfigError(
        `${file} does not exist: there is no recorded session to resume with this id`,
        'id',
      );
    throw error;
  }
  let parsed: ReturnType<typeof RecordedDocument.safeParse>;
  try {
    parsed = RecordedDocument.safeParse(JSON.parse(text));
  } catch (error) {
    throw new TranscriptError(
      `${file}: not valid JSON (${(error as Error).message}); the session cannot be resumed`,
      file,
      TranscriptErrorReason.invalidJson,
    );
  }
  if (!parsed.success) {
    throw new TranscriptError(
      `${file}: ${describeZodError(parsed.error)}; the session cannot be resumed`,
      file,
      TranscriptErrorReason.wrongShape,
    );
  }
  if (parsed.data.agent !== agent) {
    throw new ConfigError(
      `${file} was recorded by ${parsed.data.agent === undefined ? 'another tool' : `"${parsed.data.agent}"`}, ` +
        'not by this agent: dreamd resumes only the sessions it recorded itself',
      'id',
    );
  }
  return parsed.data as NativeDocument;
}
