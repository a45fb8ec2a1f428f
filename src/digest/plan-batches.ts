/**
 * Packing digests into model calls under a token budget, so a run makes as few calls as the budget allows:
 * - A digest that fits the budget is never split. It goes into the first batch with room for it (first fit,
 *   digests taken in the order given), so small sessions share a call.
 * - A digest larger than the budget is split at line boundaries. Its first part fills the room left in the
 *   last batch, the next parts fill fresh batches, so no call is half empty because of a split. Every part
 *   starts with the session header (`· part k` added) so the model knows whose lines it reads.
 * - A single line larger than a whole call (a very long user message, which is never cut) is broken at a
 *   space into pieces, each continuing with `(cont.)`: split across calls, never shortened.
 * Order: within a batch, parts keep the order of the input; the parts of one session go to batches in
 * increasing order and their lines in message order. Nothing is dropped and nothing appears twice.
 */
import { ConfigError } from '../errors.js';
import { CHARS_PER_TOKEN, estimateTokens } from './estimate-tokens.js';
import type { Batch, BatchPart, DigestLine, PlanBatchesOptions, SessionDigest } from './types.js';

/** Between two digests in one batch. */
const DIGEST_SEPARATOR = '\n\n';
const CONTINUATION_PREFIX = '(cont.) ';
/** A budget must hold a part header and this many characters of a line besides. */
const MIN_LINE_CHARS = 80;
/** When breaking a long line, a space this close to the limit is preferred to a hard cut. */
const BREAK_SEARCH_CHARS = 200;

interface Piece {
  readonly text: string;
  readonly part: BatchPart;
}

interface OpenBatch {
  readonly pieces: Piece[];
  chars: number;
}

function addedChars(batch: OpenBatch, piece: string): number {
  return (batch.pieces.length === 0 ? 0 : DIGEST_SEPARATOR.length) + piece.length;
}

function push(batch: OpenBatch, piece: Piece): void {
  batch.chars += addedChars(batch, piece.text);
  batch.pieces.push(piece);
}

/** Break one line into pieces of at most `limit` characters, preferring a space near the limit. */
function breakLine(line: DigestLine, limit: number): DigestLine[] {
  const pieces: DigestLine[] = [];
  let rest = line.text;
  while (rest.length > 0) {
    const room = pieces.length === 0 ? limit : limit - CONTINUATION_PREFIX.length;
    let end = rest.length;
    if (rest.length > room) {
      const space = rest.lastIndexOf(' ', room);
      end = space > room - BREAK_SEARCH_CHARS && space > 0 ? space : room;
    }
    const text = pieces.length === 0 ? rest.slice(0, end) : `${CONTINUATION_PREFIX}${rest.slice(0, end)}`;
    pieces.push({ message: line.message, text });
    rest = rest.slice(end).trimStart();
  }
  return pieces;
}

function partHeader(digest: SessionDigest, number: number): string {
  return `${digest.header} · part ${number}`;
}

/** Split an oversized digest into parts, the first sized to the room left in `batches`' last batch. */
function placeSplit(digest: SessionDigest, batches: OpenBatch[], budgetChars: number): void {
  // Room for a line in an empty batch, with the longest header this digest can have (one part per line).
  const longestHeader = partHeader(digest, digest.lines.length + 1).length;
  const lines = digest.lines.flatMap((line) => breakLine(line, budgetChars - longestHeader - 1));
  let index = 0;
  let number = 1;
  let batch = batches.at(-1) ?? newBatch(batches);
  while (index < lines.length) {
    const header = partHeader(digest, number);
    const taken: DigestLine[] = [];
    let text = header;
    for (; index < lines.length; index += 1) {
      const line = lines[index] as DigestLine;
      const candidate = `${text}\n${line.text}`;
      if (batch.chars + addedChars(batch, candidate) > budgetChars) break;
      text = candidate;
      taken.push(line);
    }
    if (taken.length === 0) {
      batch = newBatch(batches);
      continue;
    }
    const fromMessage = (taken[0] as DigestLine).message;
    const toMessage = (taken.at(-1) as DigestLine).message;
    push(batch, { text, part: { sessionId: digest.sessionId, fromMessage, toMessage } });
    number += 1;
    if (index < lines.length) batch = newBatch(batches);
  }
}

function newBatch(batches: OpenBatch[]): OpenBatch {
  const batch: OpenBatch = { pieces: [], chars: 0 };
  batches.push(batch);
  return batch;
}

function toBatch(open: OpenBatch): Batch {
  const text = open.pieces.map((piece) => piece.text).join(DIGEST_SEPARATOR);
  return {
    sessionIds: [...new Set(open.pieces.map((piece) => piece.part.sessionId))],
    text,
    estimatedTokens: estimateTokens(text),
    parts: open.pieces.map((piece) => piece.part),
  };
}

/**
 * Pack `digests` into batches of at most `tokensPerCall` estimated tokens each (see `estimateTokens`).
 * Throws ConfigError when the budget cannot hold a session header and a short line.
 */
export function planBatches(digests: readonly SessionDigest[], options: PlanBatchesOptions): Batch[] {
  const budgetChars = options.tokensPerCall * CHARS_PER_TOKEN;
  const batches: OpenBatch[] = [];
  for (const digest of digests) {
    if (digest.chars <= budgetChars) {
      const piece: Piece = { text: digest.text, part: { sessionId: digest.sessionId } };
      const batch = batches.find((open) => open.chars + addedChars(open, piece.text) <= budgetChars);
      push(batch ?? newBatch(batches), piece);
      continue;
    }
    if (budgetChars < partHeader(digest, digest.lines.length + 1).length + 1 + MIN_LINE_CHARS) {
      throw new ConfigError(
        `limits.digestTokensPerCall: ${options.tokensPerCall} tokens cannot hold a part of session ` +
          `${digest.sessionId}; raise it (default 24000)`,
        'limits.digestTokensPerCall',
      );
    }
    placeSplit(digest, batches, budgetChars);
  }
  return batches.filter((open) => open.pieces.length > 0).map(toBatch);
}
