/**
 * The screen of step 5 (PRODUCT.md, Consolidation): which of the model's candidate facts are held back for a
 * person to review (quarantine) instead of reaching memory, and why. Pure; runs on every candidate before
 * reconcile merges anything. A candidate is held back when:
 *   1. it carries a secret (the digest's own redactor, run on the model's output: a model that copies a
 *      secret it saw, or recalls one, never writes it);
 *   2. it reads as an instruction to an AI or to the memory system (`looksLikeInstruction`);
 *   3. its only evidence is text the agent read (`evidence: 'read'`: a tool result, a page, a file) and it is a
 *      preference or rule (type `user` or `feedback`) or reads like one: a page cannot tell the agent how to
 *      behave, only the user can;
 *   4. together with the candidate next to it from the same session it reads as an instruction: an
 *      instruction split over two messages, each half harmless alone, that the model returned as two facts.
 */
import { allText } from './candidate.js';
import type { ExtractedFact } from './extraction.js';
import { looksLikeInstruction, looksLikeRule } from './injection.js';

export interface ScreenOptions {
  /** True when a text holds a secret (key, token, password …). */
  readonly containsSecret: (text: string) => boolean;
}

function sharesSource(a: ExtractedFact, b: ExtractedFact): boolean {
  return a.sources.some((source) => b.sources.includes(source));
}

function screenOne(candidate: ExtractedFact, options: ScreenOptions): string | undefined {
  const text = allText(candidate);
  if (options.containsSecret(text)) return 'contains a secret';
  const verdict = looksLikeInstruction(text);
  if (verdict.flagged) return `reads as an instruction: ${verdict.reason ?? 'unspecified'}`;
  if (
    candidate.evidence === 'read' &&
    (candidate.type === 'user' || candidate.type === 'feedback' || looksLikeRule(text))
  ) {
    return 'only evidence is text the agent read (a tool result, a page, a file): a rule or preference needs the user';
  }
  return undefined;
}

/** The reason each held-back candidate is held back; candidates not in the map pass. */
export function screenCandidates(
  candidates: readonly ExtractedFact[],
  options: ScreenOptions,
): Map<ExtractedFact, string> {
  const held = new Map<ExtractedFact, string>();
  for (const candidate of candidates) {
    const reason = screenOne(candidate, options);
    if (reason !== undefined) held.set(candidate, reason);
  }
  // Neighbours in the model's answer, as it returned them: a split instruction comes out as adjacent facts.
  for (let index = 0; index + 1 < candidates.length; index += 1) {
    const first = candidates[index]!;
    const second = candidates[index + 1]!;
    if (held.has(first) || held.has(second) || !sharesSource(first, second)) continue;
    const verdict = looksLikeInstruction(`${first.body.trim()} ${second.body.trim()}`);
    if (!verdict.flagged) continue;
    const reason = `reads as an instruction together with the fact next to it: ${verdict.reason ?? 'unspecified'}`;
    held.set(first, reason);
    held.set(second, reason);
  }
  return held;
}
