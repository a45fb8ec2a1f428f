/** Gather (the third step of a run, see ARCHITECTURE.md): sessions in, compact redacted digests and model-call batches out. */
export {
  digestSession,
  digestedRawChars,
  DEFAULT_ASSISTANT_TEXT_CHARS,
  DEFAULT_USER_TEXT_CHARS,
  cutMiddle,
  DEFAULT_TOOL_RESULT_CHARS,
  REPEAT_MIN_CHARS,
} from './digest-session.js';
export { stripControlCharacters } from './clean-text.js';
export {
  expectedFacts,
  expectedOutputTokens,
  FACTS_PER_USER_LINE,
  planBatches,
  splitBatch,
  USER_LINE,
} from './plan-batches.js';
export { redactSecrets, containsSecret, SECRET_KINDS } from './redact-secrets.js';
export type { Redaction } from './redact-secrets.js';
export { resolveRelativeDates } from './relative-dates.js';
export { estimateTokens, CHARS_PER_TOKEN } from './estimate-tokens.js';
export { TOOL_INPUT_SUMMARY_CHARS } from './tool-lines.js';
export type {
  Batch,
  BatchPart,
  BatchSegment,
  DigestLine,
  DigestOptions,
  PlanBatchesOptions,
  SessionDigest,
} from './types.js';
