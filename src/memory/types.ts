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

export type { LedgerEntry, LedgerLookup } from '../core/ledger.js';

