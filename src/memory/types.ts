/**
 * The memory model: facts in four topic files, an index, and dreamd's own state under `.dreamd/`.
 */

export const FACT_TYPES = ['user', 'feedback', 'project', 'reference'] as const;
export type FactType = (typeof FACT_TYPES)[number];

/** Topic file of each fact type. */
export const TOPIC_FILES: Readonly<Record<FactType, string>> = {
  user: 'user.md',
  feedback: 'feedback.md',
  project: 'project.md',
  reference: 'reference.md',
};

export type FactStatus = 'active' | 'superseded';

export interface Fact {
  /** Stable id, `f-` + 10 lowercase base32 characters; never reused. */
  readonly id: string;
  readonly type: FactType;
  /** Short title, one line (the index line's link text). */
  readonly title: string;
  /** The fact or rule itself (markdown, may span lines). */
  readonly body: string;
  /** feedback / project: why it matters. */
  readonly why: string | undefined;
  /** feedback / project: how to apply it. */
  readonly howToApply: string | undefined;
  /** Date the fact was observed, `YYYY-MM-DD` (absolute). */
  readonly observed: string;
  /** Date the fact was last changed, `YYYY-MM-DD`. */
  readonly updated: string;
  /** Session ids the fact came from. */
  readonly sources: readonly string[];
  readonly status: FactStatus;
  /** Id of the newer fact that superseded this one. */
  readonly supersededBy: string | undefined;
  /** Date it was superseded, `YYYY-MM-DD`. */
  readonly supersededOn: string | undefined;
  /** True when a person changed the entry by hand since dreamd last wrote it: dreamd never overwrites it. */
  readonly editedByHand: boolean;
}

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
  readonly progress?: { readonly part: number; readonly parts: number; readonly totalMessages: number } | undefined;
}

/** Read-only view of a ledger that the session scanner needs. */
export interface LedgerLookup {
  get(sessionId: string): LedgerEntry | undefined;
  /** Lookup by relative file path, so an unchanged file is recognised without parsing it. */
  getByFile(file: string): LedgerEntry | undefined;
}
