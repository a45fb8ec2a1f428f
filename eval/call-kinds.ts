/**
 * The model's calls by kind, as they reach it: extraction, the update check, curation. The eval wraps the model
 * it gives the consolidator, so the count is the same in oracle and model mode; and the extraction answers a run
 * threw away and asked again in halves, read from the run's notes.
 */
import type { ModelProvider } from '../src/model/types.js';

export interface CallsByKind {
  extraction: number;
  updateCheck: number;
  curation: number;
}

/** The kind of a structured call, by the start of its system prompt (the update check's and curation's own). */
export function callKind(system: string): keyof CallsByKind {
  if (system.startsWith('You keep a memory of facts up to date')) return 'updateCheck';
  if (system.startsWith('You curate an AI agent')) return 'curation';
  return 'extraction';
}

/** The model, each structured call counted in `counts` by kind before it goes. */
export function countCalls(model: ModelProvider, counts: CallsByKind): ModelProvider {
  return new Proxy(model, {
    get(target, property) {
      if (property === 'generateObject')
        return (request: Parameters<ModelProvider['generateObject']>[0]) => {
          counts[callKind(request.system)] += 1;
          return target.generateObject(request);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Extraction answers a run threw away and asked again in halves, from its notes (`tallyNotes` in
 * src/consolidation/extraction/extract-tally.ts): "N answer(s) stopped at the output limit …", "N answer(s) held more
 * facts than limits.maxFactsPerAnswer …".
 */
export function halvedAnswers(notes: readonly string[]): { outputLimit: number; factLimit: number } {
  const count = (pattern: RegExp) =>
    notes.reduce((total, note) => total + Number(pattern.exec(note)?.[1] ?? 0), 0);
  return {
    outputLimit: count(/^(\d+) answer\(s\) stopped at the output limit/),
    factLimit: count(/^(\d+) answer\(s\) held more facts than/),
  };
}
