/**
 * The screen every fact passes before it reaches memory, whoever wrote it: a candidate of consolidation
 * (`screen/screen-candidates.ts` adds what only a transcript can tell) and a note the agent writes with
 * `write_memory`. Pure. A text is held back when it carries a secret (the digest's own redactor), the marker
 * of one the digest redacted, or reads as an instruction to an AI or to the memory system.
 */
import { containsSecret } from '../digest/redact-secrets.js';
import { looksLikeInstruction } from './injection.js';

/** What the digest leaves where it redacted a secret (`[REDACTED:<kind>]`). */
export const REDACTION_MARKER = '[REDACTED:';

/** The start of every reason given for a text that reads as an instruction. */
export const INSTRUCTION_REASON = 'reads as an instruction';
/** How the reason of a rule or preference whose only evidence is text the agent read starts. */
export const READ_EVIDENCE_REASON = 'only evidence is ';

/**
 * Why a fact's whole text (title, body, why, how to apply) is held back, or undefined when it passes.
 * `hasSecret` defaults to the digest's redactor; consolidation passes the one its run was given.
 */
export function screenFactText(
  text: string,
  hasSecret: (text: string) => boolean = containsSecret,
): string | undefined {
  if (hasSecret(text)) return 'contains a secret';
  // A line the digest had redacted: what is left is a fact about a secret, for a person.
  if (text.includes(REDACTION_MARKER)) return 'carries a redacted secret';
  const verdict = looksLikeInstruction(text);
  if (verdict.flagged) return `${INSTRUCTION_REASON}: ${verdict.reason ?? 'unspecified'}`;
  return undefined;
}
