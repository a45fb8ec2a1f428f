import { TranscriptError, TranscriptErrorReason } from '../errors.js';

/** What a person can do about each kind of unreadable transcript. */
const FIXES: Readonly<Record<TranscriptErrorReason, string>> = {
  [TranscriptErrorReason.invalidJson]: 'fix the JSON (or delete the file); it is read again once it changes',
  [TranscriptErrorReason.wrongShape]:
    'a native transcript is { "startedAt"?, "endedAt"?, "id"?, "agent"?, "messages": [ { "role", "content" } ] }; fix the field named',
  [TranscriptErrorReason.empty]: 'the file has no content; delete it, or let the agent finish writing it',
  [TranscriptErrorReason.binary]:
    'the file holds NUL bytes, so it is not a text transcript; move it out of the sessions directory',
  [TranscriptErrorReason.invalidUtf8]: 're-save the file as UTF-8',
  [TranscriptErrorReason.tooBig]:
    'raise limits.maxSessionBytes (DREAMD_MAX_SESSION_BYTES) or split the session',
  [TranscriptErrorReason.outsideDirectory]:
    'transcripts must be regular files inside the sessions directory; copy the file in instead of linking it',
  [TranscriptErrorReason.duplicateId]: 'give one of the two sessions another "id" (or remove the copy)',
  [TranscriptErrorReason.changedWhileRead]:
    'nothing to do: it is read again on the next tick, once it has settled',
  [TranscriptErrorReason.unreadable]: 'check that the file exists and that dreamd may read it',
  [TranscriptErrorReason.unsafeName]:
    'rename the file without control characters (newline, tab, escape, direction marks); it is read once renamed',
};

/**
 * A `TranscriptError` whose message names the file, says what is wrong and what to do:
 * `sessions/a.json: line 3 column 5: Unexpected token; fix the JSON … The file was skipped.`
 */
export function transcriptFailure(
  file: string,
  reason: TranscriptErrorReason,
  detail: string,
  cause?: unknown,
): TranscriptError {
  const message = `${file}: ${detail}; ${FIXES[reason]}. The file was skipped.`;
  return new TranscriptError(message, file, reason, cause === undefined ? undefined : { cause });
}

/**
 * Why a JSONL transcript gave no line at all: none was JSON (with the first bad line's warning), or it holds
 * nothing but whitespace.
 */
export function noLineRead(file: string, firstBadLine: string | undefined): TranscriptError {
  return firstBadLine !== undefined
    ? transcriptFailure(file, TranscriptErrorReason.invalidJson, `no line is valid JSON (${firstBadLine})`)
    : transcriptFailure(file, TranscriptErrorReason.empty, 'the file is empty (only whitespace)');
}
