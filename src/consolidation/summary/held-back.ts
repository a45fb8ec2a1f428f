/**
 * What the screen saw in a fact it held back, read from the reason it gave (`screen-candidates.ts`,
 * `screen/screen-fact.ts`): for the run record's counts and `dreamd status`, which also reads the reasons of
 * the quarantine file (written by earlier runs, some before the reasons named what they saw). Pure.
 */
import { HELD_BACK_KINDS, type HeldBackKind } from '../../core/run.js';
import { INSTRUCTION_REASON, READ_EVIDENCE_REASON } from '../../screen/screen-fact.js';

export { READ_EVIDENCE_REASON };

/** What the reason of a held-back fact says the screen saw. */
export function heldBackKind(reason: string): HeldBackKind {
  if (reason.startsWith(READ_EVIDENCE_REASON)) {
    const seen = reason.slice(READ_EVIDENCE_REASON.length);
    if (seen.startsWith("the assistant's words")) return 'assistant';
    if (seen.startsWith('a tool result')) return 'tool';
    if (seen.startsWith("a sub-agent's report")) return 'sub-agent';
    return 'read';
  }
  if (reason.startsWith('contains a secret') || reason.startsWith('carries a redacted secret'))
    return 'secret';
  if (reason.startsWith(INSTRUCTION_REASON) || /\binstruction\b/u.test(reason)) return 'instruction';
  return 'other';
}

/** Held-back facts counted by kind, in {@link HELD_BACK_KINDS} order; kinds with none left out. */
export function countHeldBack(reasons: readonly string[]): Partial<Record<HeldBackKind, number>> {
  const counts: Partial<Record<HeldBackKind, number>> = {};
  for (const reason of reasons) {
    const kind = heldBackKind(reason);
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return Object.fromEntries(
    HELD_BACK_KINDS.flatMap((kind) => (counts[kind] === undefined ? [] : [[kind, counts[kind]]])),
  );
}
