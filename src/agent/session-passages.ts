/**
 * The passages facts came from: the text of each message of a space's sessions, by session id, for the hybrid
 * recall that searches a fact together with the passage behind it (see `createRecall`'s `passages`). Read
 * through the same readers and checks as consolidation (`readSessionFile`: inside the sessions directory, under
 * the size limit); a file that cannot be read is skipped, never fatal. Each file is read again only when its
 * size or modification time changed.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { TranscriptFormat } from '../config/schema.js';
import { readerFor } from '../transcripts/transcript-readers.js';
import { readSessionFile } from '../transcripts/read-session.js';
import type { Session } from '../transcripts/types.js';

/** The texts of each session's messages (text parts of user and assistant messages), by session id. */
export type SessionPassages = () => Promise<ReadonlyMap<string, readonly string[]>>;

export interface SessionPassagesOptions {
  readonly sessionsDir: string;
  readonly format: TranscriptFormat;
  /** Largest file read, in bytes (the space's `limits.maxSessionBytes`). */
  readonly maxBytes: number;
}

/** The texts of a session's user and assistant messages, one passage per message. */
export function passagesOf(session: Session): string[] {
  const passages: string[] = [];
  for (const message of session.messages) {
    if (message.role !== 'user' && message.role !== 'assistant') continue;
    const text = message.parts
      .flatMap((part) => (part.kind === 'text' ? [part.text] : []))
      .join('\n')
      .trim();
    if (text !== '') passages.push(text);
  }
  return passages;
}

/** Passages of the sessions of one sessions directory, read lazily and cached by file size and mtime. */
export function createSessionPassages(options: SessionPassagesOptions): SessionPassages {
  const reader = readerFor(options.format);
  const files = new Map<string, { size: number; mtimeMs: number; id: string; passages: string[] }>();
  const refresh = async (): Promise<Map<string, readonly string[]>> => {
    const names = await readdir(options.sessionsDir).catch(() => [] as string[]);
    const seen = new Set<string>();
    for (const name of names) {
      if (!name.endsWith(reader.extension) || reader.isNotASession(name)) continue;
      const file = path.join(options.sessionsDir, name);
      const info = await stat(file).catch(() => undefined);
      if (info === undefined || !info.isFile()) continue;
      seen.add(name);
      const known = files.get(name);
      if (known !== undefined && known.size === info.size && known.mtimeMs === info.mtimeMs) continue;
      try {
        const { session } = await readSessionFile(name, {
          format: options.format,
          sessionsDir: options.sessionsDir,
          maxBytes: options.maxBytes,
        });
        files.set(name, {
          size: info.size,
          mtimeMs: info.mtimeMs,
          id: session.id,
          passages: passagesOf(session),
        });
      } catch {
        // A broken or oversized transcript has no passages; consolidation reports it, recall goes on.
        files.delete(name);
      }
    }
    for (const name of files.keys()) if (!seen.has(name)) files.delete(name);
    return new Map([...files.values()].map((entry) => [entry.id, entry.passages]));
  };
  // Two recalls at once share one pass over the directory.
  let current: Promise<Map<string, readonly string[]>> | undefined;
  return () => {
    current ??= refresh().finally(() => {
      current = undefined;
    });
    return current;
  };
}
