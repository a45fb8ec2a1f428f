/**
 * Packing digests into model calls under a token budget, so a run makes as few calls as the budget allows:
 * - A digest that fits the budget is never split. It goes into the first batch with room for it (first fit,
 *   digests taken in the order given), so small sessions share a call.
 * - A digest larger than the budget is split at line boundaries. Its first part fills the room left in the
 *   last batch, the next parts fill fresh batches, so no call is half empty because of a split. Every part
 *   starts with the session header (`· part k` added) so the model knows whose lines it reads.
 * - A single line larger than a whole call (a very long user message, which is never cut) is broken at a
 *   space into pieces, each continuing with `(cont.)`: split across calls, never shortened.
 * - With `outputTokensPerCall`, a batch also closes when the answer it is expected to need would pass that
 *   budget (`expectedOutputTokens`): the model's output limit is as real as its input budget, and a dense
 *   dialogue needs far more output per input token than an agent transcript of tool lines.
 * - With `factsPerCall`, a batch also closes before the facts its user lines may carry pass that limit (half a
 *   fact per user line, `expectedFacts`): an answer past `limits.maxFactsPerAnswer` is split and asked again,
 *   so a backlog of dense dialogue should not need that.
 * Order: within a batch, parts keep the order of the input; the parts of one session go to batches in
 * increasing order and their lines in message order. Nothing is dropped and nothing appears twice.
 * `splitBatch` halves a planned batch (when the model's answer hit its output limit anyway).
 */
import { ConfigError } from '../errors.js';
import { CHARS_PER_TOKEN, estimateTokens } from './estimate-tokens.js';
import type {
  Batch,
  BatchPart,
  BatchSegment,
  DigestLine,
  PlanBatchesOptions,
  SessionDigest,
} from './types.js';

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
  /** Expected output tokens of this piece. */
  readonly output: number;
  /** Facts this piece may carry: its user lines. */
  readonly facts: number;
  /** The header and lines the text was made of, so the batch can be split again. */
  readonly segment: BatchSegment;
}

interface OpenBatch {
  readonly pieces: Piece[];
  chars: number;
  output: number;
  facts: number;
}

/** A batch's three budgets: characters of digest, expected answer tokens, and facts an answer may hold. */
interface Budgets {
  readonly chars: number;
  readonly output: number;
  readonly facts: number;
}

/**
 * Expected answer tokens per estimated token of a user line: a fact restates what the user said in about
 * half the words, plus its JSON fields (type, sources, date). Measured against the dialogue benchmark of issue
 * 11, where 24,000 input tokens of dialogue needed more than 4,096 output tokens in 10 of 15 calls.
 */
const OUTPUT_PER_USER_TOKEN = 0.5;
/** The same for assistant and tool lines: facts rarely come from them (the instructions say so). */
const OUTPUT_PER_OTHER_TOKEN = 0.05;
/** Fixed cost of an answer: the JSON envelope and a session's share of it. */
const OUTPUT_PER_PIECE = 30;
/** The start of a digest line of the user's: its date when not the session's, and the role (`digest-session.ts`). */
export const USER_LINE = /^(?:\[\d{4}-\d{2}-\d{2}\] )?user: /;

function lineOutputTokens(text: string): number {
  const tokens = text.length / CHARS_PER_TOKEN;
  return tokens * (USER_LINE.test(text) ? OUTPUT_PER_USER_TOKEN : OUTPUT_PER_OTHER_TOKEN);
}

/**
 * Facts a user line is expected to carry: about one in two in dense dialogue (the rest is small talk), and far
 * fewer in an agent's transcript. A batch that still overflows is asked again in halves, so this sizes calls,
 * it does not guard against loss.
 */
export const FACTS_PER_USER_LINE = 0.5;

/** Facts these digest lines are expected to carry (see {@link FACTS_PER_USER_LINE}). */
export function expectedFacts(lines: readonly DigestLine[]): number {
  let count = 0;
  for (const line of lines) if (USER_LINE.test(line.text)) count += FACTS_PER_USER_LINE;
  return count;
}

/** Answer tokens the model is expected to need for these digest lines (see the constants above). */
export function expectedOutputTokens(lines: readonly DigestLine[]): number {
  return Math.ceil(OUTPUT_PER_PIECE + lines.reduce((sum, line) => sum + lineOutputTokens(line.text), 0));
}

function fits(
  batch: OpenBatch,
  piece: { text: string; output: number; facts: number },
  budgets: Budgets,
): boolean {
  return (
    batch.chars + addedChars(batch, piece.text) <= budgets.chars &&
    batch.output + piece.output <= budgets.output &&
    batch.facts + piece.facts <= budgets.facts
  );
}

function addedChars(batch: OpenBatch, piece: string): number {
  return (batch.pieces.length === 0 ? 0 : DIGEST_SEPARATOR.length) + piece.length;
}

function push(batch: OpenBatch, piece: Piece): void {
  batch.chars += addedChars(batch, piece.text);
  batch.output += piece.output;
  batch.facts += piece.facts;
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

/**
 * Split an oversized digest into parts, the first sized to the room left in `batches`' last batch. The output
 * and fact budgets never leave a batch empty: a line whose expected answer alone passes them still goes, alone.
 */
function placeSplit(
  digest: { sessionId: string; header: string; lines: readonly DigestLine[] },
  batches: OpenBatch[],
  budgets: Budgets,
  header: (number: number) => string,
): void {
  const budgetChars = budgets.chars;
  // Room for a line in an empty batch, with the longest header this digest can have (one part per line).
  const longestHeader = header(digest.lines.length + 1).length;
  const lines = digest.lines.flatMap((line) => breakLine(line, budgetChars - longestHeader - 1));
  let index = 0;
  let number = 1;
  let batch = batches.at(-1) ?? newBatch(batches);
  while (index < lines.length) {
    const partHeaderText = header(number);
    const taken: DigestLine[] = [];
    let text = partHeaderText;
    let output = OUTPUT_PER_PIECE;
    let facts = 0;
    for (; index < lines.length; index += 1) {
      const line = lines[index] as DigestLine;
      const candidate = `${text}\n${line.text}`;
      const lineOutput = lineOutputTokens(line.text);
      const lineFacts = USER_LINE.test(line.text) ? FACTS_PER_USER_LINE : 0;
      if (batch.chars + addedChars(batch, candidate) > budgetChars) break;
      const alone = batch.pieces.length === 0 && taken.length === 0;
      if (!alone && batch.output + output + lineOutput > budgets.output) break;
      if (!alone && batch.facts + facts + lineFacts > budgets.facts) break;
      text = candidate;
      output += lineOutput;
      facts += lineFacts;
      taken.push(line);
    }
    if (taken.length === 0) {
      batch = newBatch(batches);
      continue;
    }
    const fromMessage = (taken[0] as DigestLine).message;
    const toMessage = (taken.at(-1) as DigestLine).message;
    push(batch, {
      text,
      part: { sessionId: digest.sessionId, fromMessage, toMessage },
      output: Math.ceil(output),
      facts,
      segment: {
        sessionId: digest.sessionId,
        header: digest.header,
        lines: taken,
        partHeader: partHeaderText,
      },
    });
    number += 1;
    if (index < lines.length) batch = newBatch(batches);
  }
}

function newBatch(batches: OpenBatch[]): OpenBatch {
  const batch: OpenBatch = { pieces: [], chars: 0, output: 0, facts: 0 };
  batches.push(batch);
  return batch;
}

function toBatch(open: OpenBatch): Batch {
  const text = open.pieces.map((piece) => piece.text).join(DIGEST_SEPARATOR);
  return {
    sessionIds: [...new Set(open.pieces.map((piece) => piece.part.sessionId))],
    text,
    estimatedTokens: estimateTokens(text),
    expectedOutputTokens: open.output,
    parts: open.pieces.map((piece) => piece.part),
    segments: open.pieces.map((piece) => piece.segment),
  };
}

function pieceOfSegment(segment: BatchSegment, part: BatchPart): Piece {
  const text = [segment.partHeader ?? segment.header, ...segment.lines.map((line) => line.text)].join('\n');
  return {
    text,
    part,
    output: expectedOutputTokens(segment.lines),
    facts: expectedFacts(segment.lines),
    segment,
  };
}

/**
 * Two batches that together carry exactly what `batch` carries, each about half of it: its segments (sessions
 * or parts of one) in two groups, or, for a batch of one segment, its lines in two halves (each a part of the
 * session, with the session header). Undefined when the batch is a single line, which cannot be split.
 * `firstSegments`: the first group holds that many segments (at least one, fewer than all), not half.
 */
export function splitBatch(batch: Batch, firstSegments?: number): [Batch, Batch] | undefined {
  const segments = batch.segments;
  if (segments.length > 1) {
    const half = Math.min(segments.length - 1, Math.max(1, firstSegments ?? Math.ceil(segments.length / 2)));
    const group = (from: number, to: number): Batch => {
      const open: OpenBatch = { pieces: [], chars: 0, output: 0, facts: 0 };
      segments.slice(from, to).forEach((segment, offset) => {
        push(open, pieceOfSegment(segment, batch.parts[from + offset] ?? { sessionId: segment.sessionId }));
      });
      return toBatch(open);
    };
    return [group(0, half), group(half, segments.length)];
  }
  const only = segments[0];
  if (only === undefined || only.lines.length < 2) return undefined;
  const middle = Math.ceil(only.lines.length / 2);
  const half = (lines: readonly DigestLine[], number: number): Batch => {
    const fromMessage = (lines[0] as DigestLine).message;
    const toMessage = (lines.at(-1) as DigestLine).message;
    // A part keeps its own header; a whole session becomes parts 1 and 2.
    const partHeaderText = only.partHeader ?? `${only.header} · part ${number}`;
    const segment: BatchSegment = {
      sessionId: only.sessionId,
      header: only.header,
      lines,
      partHeader: partHeaderText,
    };
    const open: OpenBatch = { pieces: [], chars: 0, output: 0, facts: 0 };
    push(open, pieceOfSegment(segment, { sessionId: only.sessionId, fromMessage, toMessage }));
    return toBatch(open);
  };
  return [half(only.lines.slice(0, middle), 1), half(only.lines.slice(middle), 2)];
}

/**
 * Pack `digests` into batches of at most `tokensPerCall` estimated tokens each (see `estimateTokens`).
 * Throws ConfigError when the budget cannot hold a session header and a short line.
 */
export function planBatches(digests: readonly SessionDigest[], options: PlanBatchesOptions): Batch[] {
  const budgetChars = options.tokensPerCall * CHARS_PER_TOKEN;
  const budgets: Budgets = {
    chars: budgetChars,
    output: options.outputTokensPerCall ?? Number.POSITIVE_INFINITY,
    facts: options.factsPerCall ?? Number.POSITIVE_INFINITY,
  };
  const batches: OpenBatch[] = [];
  for (const digest of digests) {
    const output = budgets.output === Number.POSITIVE_INFINITY ? 0 : expectedOutputTokens(digest.lines);
    const facts = budgets.facts === Number.POSITIVE_INFINITY ? 0 : expectedFacts(digest.lines);
    if (digest.chars <= budgetChars && output <= budgets.output && facts <= budgets.facts) {
      const piece: Piece = {
        text: digest.text,
        part: { sessionId: digest.sessionId },
        output,
        facts,
        segment: { sessionId: digest.sessionId, header: digest.header, lines: digest.lines },
      };
      const batch = batches.find((open) => fits(open, piece, budgets));
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
    placeSplit(digest, batches, budgets, (number) => partHeader(digest, number));
  }
  return batches.filter((open) => open.pieces.length > 0).map(toBatch);
}
