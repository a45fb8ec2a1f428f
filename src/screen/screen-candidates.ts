/**
 * The screen before the write (see ARCHITECTURE.md): which of the model's candidate facts are held back for a
 * person to review (quarantine) instead of reaching memory, and why. Pure; runs on every candidate before
 * reconcile merges anything. A candidate is held back when:
 *   1. it carries a secret (the digest's own redactor, run on the model's output: a model that copies a
 *      secret it saw, or recalls one, never writes it), or the marker of one the digest redacted;
 *   2. it reads as an instruction to an AI or to the memory system (`looksLikeInstruction`);
 *   3. its only source is text the agent read (a tool result, a page, a file, the assistant's own words) and it
 *      is a preference or rule (type `user` or `feedback`), or reads as a rule, a preference or an order to the
 *      agent whatever its type (`looksLikeDirective`: a `project` fact that says "please write …" too), or
 *      names a credential file or variable: a page cannot tell the agent how to behave, only the user can. The source is where
 *      its words sit in the digest (`provenance.ts`), unless the user confirmed it; the model's `evidence`
 *      label is read only when the digest cannot tell (the model paraphrased). The reason names what the
 *      words were read from ("the assistant's words", "a tool result (WebFetch)", "a sub-agent's report");
 *   4. together with the candidate next to it from the same session it reads as an instruction: an
 *      instruction split over two messages, each half harmless alone, that the model returned as two facts;
 *      or it is the unfinished lead-in ("when you finish a task,") of a neighbour held as an instruction;
 *   5. its words come from a message that is part of an instruction assembled across messages of its session:
 *      two consecutive messages of the user (or two results the agent read) that read as an instruction
 *      together and not alone, or a message that stops unfinished right before one that reads as an
 *      instruction ("remember this for later: once the backup is done" then "rm -rf ~/backups").
 */
import { namesCredential } from './action-signals.js';
import { looksLikeDirective, looksLikeInstruction, looksLikeRule } from './injection.js';
import { INSTRUCTION_REASON, READ_EVIDENCE_REASON, screenFactText } from './screen-fact.js';
import {
  heldIn,
  wordsOf,
  type FactOrigin,
  type ScreenedCandidate,
  type Provenance,
  type ReadSource,
  type SourceLine,
} from './provenance.js';

export interface ScreenOptions {
  /** True when a text holds a secret (key, token, password …). */
  readonly containsSecret: (text: string) => boolean;
  /** Where each candidate's words sit in the digest; without it, the model's `evidence` label is all there is. */
  readonly provenance?: Provenance | undefined;
}

const SPLIT_REASON = 'the unfinished first or last part of an instruction held back next to it';
/** A text that stops mid-sentence: a trailing comma, colon or dash, or a word that leads on. */
const LEADS_ON =
  /(?:[,:;\-\u2013\u2014]|\b(?:and|then|to|please|also|that|e|y|et|und|dann|que|depois|luego|puis)|然后|并且)$/iu;
/** A text that starts mid-sentence: a lower-case word that carries on from the text before it. */
const CONTINUES = /^(?:\.\.\.|…|and\b|then\b|to\b|also\b|e\b|y\b|et\b|und\b|dann\b|然后)/iu;
/** A message that ends a sentence (or a list item, or a link): anything else stops unfinished. */
const FINISHED = /[.!?。！？…)\]"'”»」』`]\s*$/u;
const ASSEMBLED_REASON = 'part of an instruction assembled across messages of the session';

/**
 * Why a rule or preference read from text the agent read is held back, naming what it was read from: the
 * assistant's words, a tool's result (which tool), a sub-agent's report; or, when the digest cannot tell, the
 * model's own label.
 */
function readReason(seen: ReadSource | undefined): string {
  const what =
    seen === undefined
      ? "text the agent read, by the model's own label"
      : seen.kind === 'assistant'
        ? "the assistant's words"
        : seen.kind === 'sub-agent'
          ? "a sub-agent's report"
          : `a tool result${seen.tool === undefined ? '' : ` (${seen.tool})`}`;
  return `${READ_EVIDENCE_REASON}${what}: a rule or preference needs the user`;
}

/** Whether a reason is that of a rule or preference whose only evidence is text the agent read. */
export function isReadEvidence(reason: string): boolean {
  return reason.startsWith(READ_EVIDENCE_REASON);
}

/** Title, body, why and how to apply: all the text a candidate carries. */
function allText(candidate: ScreenedCandidate): string {
  return [candidate.title, candidate.body, candidate.why ?? '', candidate.howToApply ?? ''].join('\n');
}

function sharesSource(a: ScreenedCandidate, b: ScreenedCandidate): boolean {
  return a.sources.some((source) => b.sources.includes(source));
}

function originOf(candidate: ScreenedCandidate, provenance: Provenance | undefined): FactOrigin {
  const origin = provenance?.originOf(candidate) ?? 'unknown';
  if (origin !== 'unknown') return origin;
  return candidate.evidence === 'read' ? 'read' : 'user';
}

/**
 * The lines of a session that belong to an instruction assembled across messages (rule 5): each line is
 * paired with the next line of the same kind (the user's next message, or the next text read).
 *
 * Only lines that share a word with one of the session's candidates (`words`) can make a candidate "held in"
 * them (see `heldIn`), so only pairs with such a line are checked, and each line's own check runs at most once:
 * linear in the session, where checking every line and pair cost most of a run without model time.
 */
function assembledLines(lines: readonly SourceLine[], words: ReadonlySet<string>): SourceLine[] {
  const relevant = (line: SourceLine): boolean => {
    for (const word of line.words) if (words.has(word)) return true;
    return false;
  };
  const flaggedMemo = new Map<SourceLine, boolean>();
  const flagged = (line: SourceLine): boolean => {
    let value = flaggedMemo.get(line);
    if (value === undefined) {
      value = looksLikeInstruction(line.text).flagged;
      flaggedMemo.set(line, value);
    }
    return value;
  };
  // The next line of the same kind, for every line: one pass from the end.
  const nextOfKind = new Array<SourceLine | undefined>(lines.length);
  const lastSeen = new Map<SourceLine['kind'], SourceLine>();
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index] as SourceLine;
    nextOfKind[index] = lastSeen.get(line.kind);
    lastSeen.set(line.kind, line);
  }
  const parts = new Set<SourceLine>();
  lines.forEach((line, index) => {
    const next = nextOfKind[index];
    if (next === undefined) return;
    // A pair reads as one instruction only where the first line stops unfinished or the next carries on from
    // it; two finished sentences are each checked on their own (the candidate's own text is screened too).
    const unfinished = !FINISHED.test(line.text);
    if (!unfinished && !CONTINUES.test(next.text.trimStart())) return;
    const lineMatters = relevant(line);
    if (!lineMatters && !relevant(next)) return;
    if (flagged(line)) return;
    if (flagged(next)) {
      if (lineMatters && unfinished) parts.add(line);
      return;
    }
    if (looksLikeInstruction(`${line.text} ${next.text}`).flagged) {
      parts.add(line);
      parts.add(next);
    }
  });
  return [...parts];
}

function screenOne(
  candidate: ScreenedCandidate,
  options: ScreenOptions,
  assembled: ReadonlyMap<string, readonly SourceLine[]>,
): string | undefined {
  const text = allText(candidate);
  // Rules 1 and 2: the screen every fact passes, the agent's notes too.
  const screened = screenFactText(text, options.containsSecret);
  if (screened !== undefined) return screened;
  if (
    originOf(candidate, options.provenance) === 'read' &&
    (candidate.type === 'user' ||
      candidate.type === 'feedback' ||
      looksLikeRule(text) ||
      // The body is what the fact says; a title ("Build and deploy") and a how-to-apply are worded as orders.
      looksLikeDirective(candidate.body) ||
      namesCredential(text))
  ) {
    // Read from the digest when it tells the origin; else the model's label said so.
    const fromDigest = options.provenance?.originOf(candidate) === 'read';
    return readReason(fromDigest ? options.provenance?.readFrom(candidate) : undefined);
  }
  const parts = candidate.sources.flatMap((source) => assembled.get(source) ?? []);
  if (heldIn(candidate, parts)) return ASSEMBLED_REASON;
  return undefined;
}

/** The reason each held-back candidate is held back; candidates not in the map pass. */
export function screenCandidates<Candidate extends ScreenedCandidate>(
  candidates: readonly Candidate[],
  options: ScreenOptions,
): Map<Candidate, string> {
  const held = new Map<Candidate, string>();
  const assembled = new Map<string, readonly SourceLine[]>();
  const provenance = options.provenance;
  if (provenance !== undefined) {
    const wordsBySource = new Map<string, Set<string>>();
    for (const candidate of candidates) {
      const words = wordsOf(candidate.body);
      for (const source of candidate.sources) {
        const all = wordsBySource.get(source) ?? new Set<string>();
        for (const word of words) all.add(word);
        wordsBySource.set(source, all);
      }
    }
    for (const [source, words] of wordsBySource)
      assembled.set(source, assembledLines(provenance.linesOf(source), words));
  }
  for (const candidate of candidates) {
    const reason = screenOne(candidate, options, assembled);
    if (reason !== undefined) held.set(candidate, reason);
  }
  // Neighbours in the model's answer, as it returned them: a split instruction comes out as adjacent facts.
  for (let index = 0; index + 1 < candidates.length; index += 1) {
    const first = candidates[index]!;
    const second = candidates[index + 1]!;
    if (!sharesSource(first, second)) continue;
    const firstHeld = held.get(first);
    const secondHeld = held.get(second);
    // One half held as an instruction, the other an unfinished sentence that leads into it or out of it.
    if (firstHeld?.startsWith(INSTRUCTION_REASON) === true && secondHeld === undefined) {
      if (CONTINUES.test(second.body.trim())) held.set(second, SPLIT_REASON);
      continue;
    }
    if (secondHeld?.startsWith(INSTRUCTION_REASON) === true && firstHeld === undefined) {
      if (LEADS_ON.test(first.body.trim())) held.set(first, SPLIT_REASON);
      continue;
    }
    if (firstHeld !== undefined || secondHeld !== undefined) continue;
    const verdict = looksLikeInstruction(`${first.body.trim()} ${second.body.trim()}`);
    if (!verdict.flagged) continue;
    const reason = `reads as an instruction together with the fact next to it: ${verdict.reason ?? 'unspecified'}`;
    held.set(first, reason);
    held.set(second, reason);
  }
  return held;
}
