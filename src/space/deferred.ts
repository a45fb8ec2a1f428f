/**
 * Deferred facts (`.dreamd/pending.json`, see the glossary in ARCHITECTURE.md): facts a run produced for a file it must not write (a topic file
 * that does not parse, or that shares a fact id with another file). They wait here, are part of memory for
 * every reader meanwhile (the model, search, recall), and land in their file on the first run after a person
 * fixes it; then they leave this file. A session is marked consolidated only once its facts are in a topic
 * file, in quarantine or here.
 */
import { z } from 'zod';
import { FACT_OWNERS, FACT_TYPES, type Fact } from '../memory/types.js';
import { DEFERRED_FACTS_FILE } from './paths.js';

export { DEFERRED_FACTS_FILE } from './paths.js';

const optionalString = z.string().optional();

/** A deferred fact as it is kept in `.dreamd/pending.json` (the same fields as `Fact`). */
export const FactRecord = z.object({
  id: z.string().regex(/^f-[a-z0-9]{10}$/),
  type: z.enum(FACT_TYPES),
  title: z.string(),
  body: z.string(),
  why: optionalString,
  howToApply: optionalString,
  observed: z.string(),
  updated: z.string(),
  sources: z.array(z.string()),
  status: z.enum(['active', 'superseded']),
  supersededBy: optionalString,
  supersededOn: optionalString,
  editedByHand: z.boolean(),
  owner: z.enum(FACT_OWNERS).optional(),
  file: optionalString,
  description: optionalString,
});

const DeferredFactsFile = z.object({ version: z.literal(1), facts: z.array(FactRecord) });

export interface DeferredFactsRead {
  readonly facts: readonly Fact[];
  /** Set when the file exists but cannot be read; its bytes stay in the run record of the run that replaces it. */
  readonly problem: string | undefined;
}

function toFact(record: z.infer<typeof FactRecord>): Fact {
  return {
    ...record,
    why: record.why,
    howToApply: record.howToApply,
    supersededBy: record.supersededBy,
    supersededOn: record.supersededOn,
  } as Fact;
}

/** Parse the pending file's text (null: no file). Never throws. */
export function parseDeferredFacts(text: string | null): DeferredFactsRead {
  if (text === null) return { facts: [], problem: undefined };
  try {
    return { facts: DeferredFactsFile.parse(JSON.parse(text)).facts.map(toFact), problem: undefined };
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return {
      facts: [],
      problem:
        `${DEFERRED_FACTS_FILE}: unreadable (${detail}); the facts it held are not shown. Restore it from the last run ` +
        "(`dreamd history`, `dreamd rollback`); the next run that holds facts back replaces it and keeps its bytes in that run's record.",
    };
  }
}

/** The pending file for these facts, sorted by id so the same facts give the same bytes; null when none. */
export function serializeDeferredFacts(facts: readonly Fact[]): string | null {
  if (facts.length === 0) return null;
  const records = [...facts]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((fact) => FactRecord.parse(JSON.parse(JSON.stringify(fact))));
  return `${JSON.stringify({ version: 1, facts: records }, null, 2)}\n`;
}
