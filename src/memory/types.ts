/**
 * The memory model: facts in four topic files, an index, and dreamd's own state under `.dreamd/`.
 */

/** What the registry says about one fact type. */
export interface MemoryTypeSpec {
  /** Topic file of the type in the `topics` layout. */
  readonly file: string;
  /** Position of the type's lines in `MEMORY.md` (0 first). */
  readonly indexOrder: number;
  /** Frontmatter `name` and `description` of a new topic file. */
  readonly name: string;
  readonly description: string;
  /** The line of the extraction prompt that says what the type holds. */
  readonly prompt: string;
  /** Body written as rule / **Why:** / **How to apply:**. */
  readonly structured: boolean;
}

/**
 * The memory types: the one table every other module derives from (files, index order, prompt text,
 * frontmatter). Adding a type is adding a row here; the compiler then names every `Record<FactType, …>` that
 * lacks it. Row order is the canonical order (parse order, schema enum order).
 */
export const MEMORY_TYPES = {
  user: {
    file: 'user.md',
    indexOrder: 1,
    name: 'User',
    description: 'Who the user is — preferences, working style, favourite stack.',
    prompt:
      'who the user is. Their role and expertise, their preferences, how they like to work and be answered, their usual tools and stack, personal details they chose to share (city, time zone, language).',
    structured: false,
  },
  feedback: {
    file: 'feedback.md',
    // Feedback first: saved corrections that are not applied later is the most common complaint about agent memory.
    indexOrder: 0,
    name: 'Feedback',
    description: 'Corrections and confirmations from the user, each a rule with Why and How to apply.',
    prompt:
      'how the user wants the agent to work. A correction ("no, not like that") or a confirmation of an approach that worked. Write the body as the rule itself, in one sentence; put the reason the user gave in "why" and when and how to follow the rule in "howToApply".',
    structured: true,
  },
  project: {
    file: 'project.md',
    indexOrder: 2,
    name: 'Project',
    description: 'The active project — architecture, decisions and conventions.',
    prompt:
      'the work itself. Architecture, technical decisions and their reasons, conventions, who owns what, deadlines and milestones. Write deadlines as absolute dates. Use "why" and "howToApply" when the transcript gives them.',
    structured: true,
  },
  reference: {
    file: 'reference.md',
    indexOrder: 3,
    name: 'Reference',
    description: 'Links and external references worth keeping.',
    prompt: 'where things live. Links, dashboards, documents, tickets, channels, and what each is for.',
    structured: false,
  },
} as const satisfies Record<string, MemoryTypeSpec>;

export type FactType = keyof typeof MEMORY_TYPES;
export const FACT_TYPES = Object.keys(MEMORY_TYPES) as [FactType, ...FactType[]];

/** Topic file of each fact type. */
export const TOPIC_FILES: Readonly<Record<FactType, string>> = Object.fromEntries(
  FACT_TYPES.map((type) => [type, MEMORY_TYPES[type].file]),
) as Record<FactType, string>;

/** The types in `MEMORY.md` order. */
export const INDEX_ORDER: readonly FactType[] = [...FACT_TYPES].sort(
  (a, b) => MEMORY_TYPES[a].indexOrder - MEMORY_TYPES[b].indexOrder,
);

/** The type whose topic file is `fileName`, if any. */
export function typeOfTopicFile(fileName: string): FactType | undefined {
  return FACT_TYPES.find((type) => MEMORY_TYPES[type].file === fileName);
}

/** Who wrote a fact: dreamd (consolidation), the agent (`write_memory`), or a person / another tool. */
export const FACT_OWNERS = ['dreamd', 'agent', 'other'] as const;
export type FactOwner = (typeof FACT_OWNERS)[number];

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
  /** Who wrote it; absent means dreamd. Facts of `other` live in files dreamd never writes. */
  readonly owner?: FactOwner;
  /** For a fact of `other` (or an agent note): its file, relative to the memory directory. */
  readonly file?: string;
  /** A one-line summary written with the fact (a Claude Code memory's frontmatter `description`); the index hook. */
  readonly description?: string;
  /** Times sessions after it was saved taught it again, the last date and their ids (`taught-again.ts`). */
  readonly taughtAgain?: TaughtAgain;
}

/**
 * A fact read from a file no run of dreamd wrote (a Claude Code memory, a line of someone's MEMORY.md, a
 * teammate's AGENTS.md entry): active, from no session, dated by its file or its line. One constructor, so
 * the readers of such files agree on every field but the ones they read.
 */
export function factFromFile(
  text: Pick<Fact, 'id' | 'type' | 'title' | 'body' | 'why' | 'howToApply'>,
  origin: {
    /** The day it holds from: observed and updated alike. */
    readonly date: string;
    readonly editedByHand: boolean;
    readonly owner: FactOwner;
    readonly file: string;
    /** Left out of the fact when undefined or empty. */
    readonly description?: string | undefined;
  },
): Fact {
  return {
    id: text.id,
    type: text.type,
    title: text.title,
    body: text.body,
    why: text.why,
    howToApply: text.howToApply,
    observed: origin.date,
    updated: origin.date,
    sources: [],
    status: 'active',
    supersededBy: undefined,
    supersededOn: undefined,
    editedByHand: origin.editedByHand,
    owner: origin.owner,
    file: origin.file,
    ...(origin.description ? { description: origin.description } : {}),
  };
}

import type { TaughtAgain } from './taught-again-record.js';

export type { LedgerEntry, LedgerLookup } from '../core/ledger.js';
