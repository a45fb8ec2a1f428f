/**
 * The ledger port: what has been consolidated of each session. memory/ reads and writes the ledger file;
 * transcripts/ and consolidation/ only look entries up through this interface.
 */

/**
 * One line of the ledger (`.dreamd/ledger.json`): how much of a session file has been consolidated.
 * Keyed by session id. A session whose file later grows is read again from `messageCount` on.
 */
export interface LedgerEntry {
  readonly sessionId: string;
  /** Path of the transcript relative to the space's sessions directory. */
  readonly file: string;
  /** Messages consolidated so far (the next read starts at this index). */
  readonly messageCount: number;
  /** File size and mtime when it was consolidated: unchanged means nothing new, without parsing. */
  readonly size: number;
  readonly mtimeMs: number;
  readonly runId: string;
  /** ISO timestamp. */
  readonly consolidatedAt: string;
  /**
   * Set while a session bigger than one run is consolidated part by part: which part the last run was and
   * about how many it takes, and the messages in the file. `messageCount` is how far it got; `mtimeMs` is -1,
   * so the entry never matches the file and the next scan reads the rest.
   */
  readonly progress?:
    { readonly part: number; readonly parts: number; readonly totalMessages: number } | undefined;
}

/** Read-only view of a ledger that the session scanner needs. */
export interface LedgerLookup {
  get(sessionId: string): LedgerEntry | undefined;
  /** Lookup by relative file path, so an unchanged file is recognised without parsing it. */
  getByFile(file: string): LedgerEntry | undefined;
}
