/**
 * Where a candidate fact comes from, read from where its words sit in the digest the model was given, never
 * from the model's own `evidence` label: a model that copies a rule out of a file and calls it the user's is
 * caught here. Pure: built from the digest lines of a run's batches.
 *
 * Lines are of two kinds. The user's: `user:` lines and compaction summaries (what the user typed or was
 * summarised saying). Read: everything else the digest shows (`tool ←` results, files and pages, `sub-agent`
 * lines, the assistant's own words and calls): text the agent read or wrote, which is not the user's wish.
 *
 * A fact's origin:
 * - `user` when the user's lines of its sessions hold at least half its words ({@link USER_SHARE}), or when the
 *   assistant asked a question about it and the user's next line answers it with a short yes
 *   ("yes", "ok", "sim", "是", "はい" …): the user typed it, restated it or confirmed it. A yes that answers
 *   another question ("Shall I run the tests now?") confirms nothing;
 * - `read` when the other lines hold at least half its words and the user's do not; or, short of half, when
 *   text the agent read (a tool's result, a sub-agent's report, base64 in them decoded) holds more of its words
 *   than the user's lines, or when that text gives an order and no line of the user's does (a rule read in
 *   German or Japanese and saved in English shares no word with it);
 * - `unknown` when none of these holds (the model paraphrased or translated what the user said): the screen
 *   then falls back on the label.
 *
 * Words are compared by their first five letters (so "benutze" meets "benutzen", "install" meets "installs"),
 * Chinese and Japanese text by pairs of characters, so no language needs a word list.
 */
import type { BatchSegment, DigestLine } from '../digest/types.js';
import type { FactType } from '../memory/types.js';
import { looksLikeDirective } from './injection.js';
import { screeningText } from './screening-text.js';

/**
 * A candidate fact as the screen reads it: what consolidation's candidates (`ScreenedCandidate`) and the agent's
 * notes both are. `evidence` is the model's own label (`read`: only in text the agent read), read only when the
 * digest cannot tell where the words come from.
 */
export interface ScreenedCandidate {
  readonly type: FactType;
  readonly title: string;
  readonly body: string;
  readonly why: string | null;
  readonly howToApply: string | null;
  readonly sources: readonly string[];
  readonly evidence?: 'user' | 'read' | null | undefined;
}

export const FACT_ORIGINS = ['user', 'read', 'unknown'] as const;
export type FactOrigin = (typeof FACT_ORIGINS)[number];

/**
 * What text the agent read a line is: the assistant's own words (its text and its calls), a tool's result
 * (`tool` names the tool), or a sub-agent's brief or answer.
 */
export interface ReadSource {
  readonly kind: 'assistant' | 'tool' | 'sub-agent';
  readonly tool?: string | undefined;
}

/** One digest line of a session, with who it speaks for and its words. */
export interface SourceLine {
  readonly kind: 'user' | 'read';
  /** For a read line, what it is; undefined for the user's. */
  readonly read?: ReadSource | undefined;
  /** The line's content, without its `user:` or `tool ← Name:` label. */
  readonly text: string;
  /** Its words, and for text read, the words of what base64 in it decodes to. */
  readonly words: ReadonlySet<string>;
  /** An assistant's line that asks (a `?` or `？`), not a tool call: what a user's short yes can confirm. */
  readonly question?: boolean | undefined;
}

/** How the assistant's own lines count (see `createProvenance`). */
export interface ProvenanceOptions {
  /**
   * `read` (consolidation's digest): the assistant's words are text the agent read, as a tool's are.
   * `questions`: they only carry the questions a user's yes confirms, and hold no fact (an agent that saves a
   * note restates what the user said first).
   */
  readonly assistantLines?: 'read' | 'questions';
}

export interface Provenance {
  /** Where the candidate's words sit in its sessions' digest lines (see the module comment). */
  readonly originOf: (candidate: ScreenedCandidate) => FactOrigin;
  /** The digest lines of a session, in order; empty for a session the run did not read. */
  readonly linesOf: (sessionId: string) => readonly SourceLine[];
  /**
   * What text the agent read holds the candidate's words: the read line of its sessions that holds the most
   * of them (the first of equals); when no one line holds half, the kind of lines that together hold the most.
   * Undefined when the read lines together hold less than half of them.
   */
  readonly readFrom: (candidate: ScreenedCandidate) => ReadSource | undefined;
}

/** Share of a fact's words the user's lines must hold for the fact to be the user's. */
export const USER_SHARE = 0.5;
/** Letters a word is compared by. */
const STEM_LETTERS = 5;
/** Longest user reply read as a yes to the line before it, in characters. */
const SHORT_REPLY_CHARS = 40;

const USER_LINE = /^(?:\[\d{4}-\d{2}-\d{2}\] )?(?:user|summary of earlier conversation): /u;
/** The label a digest line starts with: `user:`, `assistant:`, `tool ← Read:`, `sub-agent →` … */
const LABEL =
  /^(?:\[\d{4}-\d{2}-\d{2}\] )?(?:user:|assistant:|summary of earlier conversation:|tool ← [^:]*:|sub-agent [←→])\s*/u;

/** Affirmations, a closed class: the start of a short reply that confirms what came before. */
const YES =
  /^(?:yes|yeah|yep|yup|ok|okay|sure|right|correct|exactly|please do|do it|go ahead|sim|isso|claro|certo|si|vale|oui|d'accord|exact|ja|genau|klar|jawohl|richtig|esatto|va bene|prima|precies|да|так|是|对|好|可以|没错|嗯|はい|ええ|うん|そう)(?![\p{L}])/iu;

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** The words of a text: stems of its letter runs, and pairs of characters of its CJK runs. */
export function wordsOf(text: string): Set<string> {
  const words = new Set<string>();
  for (const run of screeningText(text)
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (CJK.test(run)) {
      const chars = [...run];
      if (chars.length === 1) words.add(run);
      for (let index = 0; index + 1 < chars.length; index += 1) words.add(chars[index]! + chars[index + 1]!);
      continue;
    }
    if (run.length < 3) continue;
    words.add(run.slice(0, STEM_LETTERS));
  }
  return words;
}

/** `tool ← Read:` or `tool ← Bash ERROR:` (the tool's name), `sub-agent → ` / `sub-agent ← `. */
const TOOL_LINE = /^(?:\[\d{4}-\d{2}-\d{2}\] )?tool ← (\S+?)(?: ERROR)?:/u;
const SUB_AGENT_LINE = /^(?:\[\d{4}-\d{2}-\d{2}\] )?sub-agent [←→]/u;

function readSourceOf(text: string): ReadSource {
  const tool = TOOL_LINE.exec(text);
  if (tool !== null) return { kind: 'tool', tool: tool[1] };
  if (SUB_AGENT_LINE.test(text)) return { kind: 'sub-agent' };
  return { kind: 'assistant' };
}

/** A run of base64 long enough to hide a sentence. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/gu;

/**
 * What the base64 runs of a text decode to, when that is text (no replacement character, mostly letters and
 * spaces): an order read encoded is still an order read.
 */
export function decodedBase64(text: string): string {
  const decoded: string[] = [];
  for (const [run] of text.matchAll(BASE64_RUN)) {
    if (!/[A-Z]/u.test(run) || !/[a-z0-9]/u.test(run)) continue;
    const plain = Buffer.from(run, run.includes('-') || run.includes('_') ? 'base64url' : 'base64').toString(
      'utf8',
    );
    if (plain.includes('\uFFFD') || plain.length < 8) continue;
    const readable = plain.match(/[\p{L}\p{N}\s.,:;!?'"()-]/gu)?.length ?? 0;
    if (readable / plain.length >= 0.9) decoded.push(plain);
  }
  return decoded.join(' ');
}

function sourceLine(line: DigestLine): SourceLine {
  const user = USER_LINE.test(line.text);
  const text = line.text.replace(LABEL, '');
  if (user) return { kind: 'user', text, words: wordsOf(text) };
  const read = readSourceOf(line.text);
  const decoded = decodedBase64(text);
  const question =
    read.kind === 'assistant' &&
    !/^(?:\[\d{4}-\d{2}-\d{2}\] )?assistant →/u.test(line.text) &&
    /[?？]/u.test(text);
  return {
    kind: 'read',
    read,
    text: decoded === '' ? text : `${text} ${decoded}`,
    words: wordsOf(decoded === '' ? text : `${text} ${decoded}`),
    ...(question ? { question } : {}),
  };
}

function share(words: ReadonlySet<string>, lines: readonly SourceLine[]): number {
  if (words.size === 0) return 0;
  let held = 0;
  for (const word of words) if (lines.some((line) => line.words.has(word))) held += 1;
  return held / words.size;
}

/** Whether a user's line is a short yes ("ok", "sim", "はい" …). */
function isShortYes(line: SourceLine): boolean {
  return (
    line.kind === 'user' && line.text.length <= SHORT_REPLY_CHARS && YES.test(screeningText(line.text).trim())
  );
}

/** Share of a fact's words the question a yes answers must hold itself: it names what it asks about. */
const QUESTION_SHARE = 0.25;

/**
 * Whether the user confirmed these words: a short yes to the assistant's last question before it (no line of
 * the user's between), where the question holds a quarter of them itself and, with the text read since the
 * user's line before, at least half. "Shall I remember that you prefer answers ending with that link?" after
 * a page that asks for the link confirms it; "Shall I run the test suite now?" confirms nothing.
 */
function confirmedByUser(words: ReadonlySet<string>, lines: readonly SourceLine[]): boolean {
  let question: SourceLine | undefined;
  let since: SourceLine[] = [];
  for (const line of lines) {
    if (line.kind === 'user') {
      if (
        question !== undefined &&
        isShortYes(line) &&
        share(words, [question]) >= QUESTION_SHARE &&
        share(words, since) >= USER_SHARE
      )
        return true;
      question = undefined;
      since = [];
      continue;
    }
    since.push(line);
    if (line.question === true) question = line;
  }
  return false;
}

/** The provenance of candidates from these batch segments (a session split over batches is joined). */
export function createProvenance(
  segments: readonly BatchSegment[],
  options: ProvenanceOptions = {},
): Provenance {
  const assistantIsRead = options.assistantLines !== 'questions';
  const sessions = new Map<string, SourceLine[]>();
  for (const segment of segments) {
    const lines = sessions.get(segment.sessionId) ?? [];
    for (const line of segment.lines) lines.push(sourceLine(line));
    sessions.set(segment.sessionId, lines);
  }
  const linesOf = (sessionId: string): readonly SourceLine[] => sessions.get(sessionId) ?? [];
  /** Lines that hold what the agent read: the assistant's own too, unless they only carry questions. */
  const isRead = (line: SourceLine): boolean =>
    line.kind === 'read' && (assistantIsRead || line.read?.kind !== 'assistant');
  /** Text from outside the conversation: a tool's result or a sub-agent's report, never the assistant's words. */
  const isOutside = (line: SourceLine): boolean => line.kind === 'read' && line.read?.kind !== 'assistant';

  const originOf = (candidate: ScreenedCandidate): FactOrigin => {
    const lines = candidate.sources.flatMap((source) => linesOf(source));
    if (lines.length === 0) return 'unknown';
    const words = wordsOf(candidate.body);
    const userLines = lines.filter((line) => line.kind === 'user');
    const userShare = share(words, userLines);
    if (userShare >= USER_SHARE) return 'user';
    if (confirmedByUser(words, lines)) return 'user';
    if (share(words, lines.filter(isRead)) >= USER_SHARE) return 'read';
    // Short of half anywhere (paraphrased, translated, encoded): outside text that holds more of it than the
    // user's lines, or that gives an order where the user gave none, is where it came from.
    const outside = lines.filter(isOutside);
    if (outside.length === 0) return 'unknown';
    if (share(words, outside) > userShare) return 'read';
    if (
      outside.some((line) => looksLikeDirective(line.text)) &&
      !userLines.some((line) => looksLikeDirective(line.text))
    )
      return 'read';
    return 'unknown';
  };

  const readFrom = (candidate: ScreenedCandidate): ReadSource | undefined => {
    const words = wordsOf(candidate.body);
    let best: { line: SourceLine; share: number } | undefined;
    for (const line of candidate.sources.flatMap((source) => linesOf(source))) {
      if (!isRead(line)) continue;
      const held = share(words, [line]);
      if (held > (best?.share ?? 0)) best = { line, share: held };
    }
    if (best !== undefined && best.share >= USER_SHARE) return best.line.read;
    // The words spread over several lines: the kind of read line that holds the most of them together.
    const lines = candidate.sources.flatMap((source) => linesOf(source)).filter(isRead);
    if (share(words, lines) < USER_SHARE) {
      // Found by the fallbacks of `originOf`: the outside text the fact came from, by the most words held.
      const outside = candidate.sources.flatMap((source) => linesOf(source)).filter(isOutside);
      return outside.length === 0
        ? undefined
        : outside.reduce((most, line) => (share(words, [line]) > share(words, [most]) ? line : most)).read;
    }
    const kinds = (['tool', 'assistant', 'sub-agent'] as const).map((kind) => ({
      kind,
      share: share(
        words,
        lines.filter((line) => line.read?.kind === kind),
      ),
    }));
    const top = kinds.reduce((most, entry) => (entry.share > most.share ? entry : most));
    return { kind: top.kind };
  };
  return { originOf, linesOf, readFrom };
}

/** Whether these lines hold at least half the words of the candidate's body. */
export function heldIn(candidate: ScreenedCandidate, lines: readonly SourceLine[]): boolean {
  return lines.length > 0 && share(wordsOf(candidate.body), lines) >= USER_SHARE;
}
