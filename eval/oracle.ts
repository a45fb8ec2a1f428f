/**
 * The oracle that plays the model in `npm run eval`: for each session of an extraction prompt it answers with
 * the dataset's reference facts of exactly the turns the prompt carries (a turn counts when its text is in
 * that session's digest), so what is measured is dreamd's code, not a model. A planted update names the older
 * fact in `replaces` only when that fact is in the call's memory list, as a model could.
 */
import type { AnthropicReply, RecordedAnthropicRequest } from '../harness/fake-anthropic-server.js';
import {
  checkInPrompt,
  indexInPrompt,
  isUpdateCheckRequest,
  sessionsInPrompt,
  withCurator,
  type CuratorResult,
  type PromptFact,
} from '../harness/scripted-extractor.js';
import { knownNames, namesIn } from '../src/consolidation/curation/curate.js';
import type { ReferenceFact, Turn } from './format.js';

/** Dates the digest adds after relative expressions, removed before looking for a turn's text. */
const RESOLVED_DATE =
  / \[(?:\d{4}(?:-\d{2}){0,2}|(?:week|weekend) of \d{4}-\d{2}-\d{2}|(?:spring|summer|autumn|fall|winter) \d{4})\]/g;

export function normalise(text: string): string {
  return text.replace(RESOLVED_DATE, '').replace(/\s+/g, ' ').trim();
}

/** The title the oracle gives a reference fact: its text, cut as dreamd cuts titles. */
export function oracleTitle(fact: ReferenceFact): string {
  return fact.text.length <= 80 ? fact.text : fact.text.slice(0, 79);
}

export interface OracleInput {
  readonly facts: readonly ReferenceFact[];
  /** Turn id → its text as written in the transcript. */
  readonly turns: ReadonlyMap<
    string,
    { readonly sessionId: string; readonly turn: Turn; readonly content: string }
  >;
  /** Newer turn id → older turn id, from `dreamd_updates`. */
  readonly updates: ReadonlyMap<string, string>;
  /** Turns that teach a rule (`dreamd_rules`): answered as feedback. Omitted: none. */
  readonly rules?: ReadonlySet<string>;
  /**
   * Turns whose facts curation leaves apart (instructions, near-twin rules): merging two different instructions
   * is the wrong merge the eval looks for in dreamd's code, so the oracle's curator never makes it. Omitted: none.
   */
  readonly apart?: ReadonlySet<string>;
}

export interface OracleLog {
  /** Turns that reached the model, by call. */
  readonly callTurns: string[][];
  /** Updates whose older fact was in the call's memory list. */
  seenUpdates: number;
  /** Updates whose older fact was not in the call's memory list. */
  missedUpdates: number;
  /** Of those, updates whose older fact the update check listed beside the new one (named there). */
  checkedUpdates: number;
}

export function createOracle(input: OracleInput): {
  reply: (request: RecordedAnthropicRequest) => AnthropicReply;
  log: OracleLog;
} {
  const log: OracleLog = { callTurns: [], seenUpdates: 0, missedUpdates: 0, checkedUpdates: 0 };
  // Counted by update, not by call: a turn carried twice (a split batch, a later run) or checked twice counts
  // once, so the share in view is a share of the updates.
  const seen = new Set<string>();
  const missed = new Set<string>();
  const checked = new Set<string>();
  const recount = (): void => {
    const out = [...missed].filter((turn) => !seen.has(turn));
    log.seenUpdates = seen.size;
    log.missedUpdates = out.length;
    log.checkedUpdates = out.filter((turn) => checked.has(turn)).length;
  };
  const byTurn = new Map(input.facts.map((fact) => [fact.turn, fact]));
  /**
   * The turn each fact the extraction answered came from, by its text and observed date: a value that comes
   * back (SQLite, then Redis, then SQLite again) is one text at two turns, told apart by the date the update
   * check shows beside it, as a model reading that date could.
   */
  const answeredTurns = new Map<string, string>();
  const answeredKey = (text: string, observed: string) => `${text}\n${observed}`;
  const changing = new Set(
    [...input.updates].flatMap(([newer, older]) => [byTurn.get(newer)?.text, byTurn.get(older)?.text]),
  );
  for (const turn of input.apart ?? []) changing.add(byTurn.get(turn)?.text);
  changing.delete(undefined);
  return {
    log,
    // Facts whose value changes later are left apart: the update finds them by title, as it would unmerged.
    reply: withCurator(
      (request) => (isUpdateCheckRequest(request) ? check(request) : extract(request)),
      (type, facts) => oracleCurate(type, facts, changing),
    ),
  };
  /**
   * The update check: a new fact that is the newer of a planted update names its older fact when that fact is
   * among the related facts listed for it, as a model that read both could.
   */
  function check(request: RecordedAnthropicRequest): AnthropicReply {
    const byText = new Map(input.facts.map((fact) => [fact.text, fact]));
    const updates = checkInPrompt(request.prompt).flatMap((entry) => {
      const turn = answeredTurns.get(answeredKey(entry.body, entry.observed));
      const fact = (turn === undefined ? undefined : byTurn.get(turn)) ?? byText.get(entry.body);
      const olderTurn = fact === undefined ? undefined : input.updates.get(fact.turn);
      const older = olderTurn === undefined ? undefined : byTurn.get(olderTurn);
      if (older === undefined) return [];
      const ids = entry.related.filter((line) => line.title === oracleTitle(older)).map((line) => line.id);
      if (ids.length > 0 && fact !== undefined) {
        checked.add(fact.turn);
        recount();
      }
      return ids.length === 0 ? [] : [{ fact: entry.id, replaces: ids }];
    });
    return { json: { updates } };
  }
  function extract(request: RecordedAnthropicRequest): AnthropicReply {
    const index = indexInPrompt(request.prompt);
    const carried: string[] = [];
    const out: unknown[] = [];
    /**
     * Texts of the facts this answer returns: an update of one of them names its exact title, wherever in the
     * prompt it stands (a model reads the whole prompt before it answers; a backlog's sessions need not come in
     * date order).
     */
    const answered = new Set<string>();
    for (const session of sessionsInPrompt(request.prompt)) {
      const text = normalise(session.text);
      for (const [turnId, entry] of input.turns) {
        if (entry.sessionId !== session.id || !text.includes(normalise(entry.content))) continue;
        const fact = byTurn.get(turnId);
        if (fact !== undefined) answered.add(fact.text);
      }
    }
    for (const session of sessionsInPrompt(request.prompt)) {
      const text = normalise(session.text);
      for (const [turnId, entry] of input.turns) {
        if (entry.sessionId !== session.id || !text.includes(normalise(entry.content))) continue;
        carried.push(turnId);
        const fact = byTurn.get(turnId);
        if (fact === undefined) continue;
        const olderTurn = input.updates.get(turnId);
        const older = olderTurn === undefined ? undefined : byTurn.get(olderTurn);
        const replaces = older === undefined ? [] : olderInView(older, index, answered);
        if (older !== undefined) {
          (replaces.length > 0 ? seen : missed).add(turnId);
          recount();
        }
        answeredTurns.set(answeredKey(fact.text, session.date), turnId);
        out.push({
          type: input.rules?.has(turnId) === true ? 'feedback' : 'user',
          title: oracleTitle(fact),
          body: fact.text,
          why: null,
          howToApply: null,
          observed: session.date,
          sources: [session.id],
          replaces,
          confidence: null,
        });
      }
    }
    log.callTurns.push(carried);
    return { json: { facts: out } };
  }
}

/**
 * What the oracle names in `replaces` for an update of `older`, as a model could: the id of its line in the
 * call's memory list, or, when the same answer returns it too, its exact title (the instructions say so);
 * nothing when neither shows it.
 */
export function olderInView(
  older: ReferenceFact,
  index: readonly { readonly id: string; readonly title: string }[],
  answered: ReadonlySet<string>,
): string[] {
  const listed = index.filter((line) => line.title === oracleTitle(older)).map((line) => line.id);
  if (listed.length > 0) return listed;
  return answered.has(older.text) ? [oracleTitle(older)] : [];
}

/** Longest body the oracle curator writes by merging: facts of one subject packed up to this size. */
export const ORACLE_MERGED_CHARS = 600;

/**
 * The oracle's answer to a curation call: the facts of one subject (the first name each holds; facts naming
 * nobody together) packed, in date order, into facts of at most {@link ORACLE_MERGED_CHARS} characters whose
 * body is their bodies one after the other, so no detail is lost and no two subjects meet. People's facts
 * (read-only) are left alone, and so are the facts of a planted update (`changing`): a fact merged into a
 * broader one could not be superseded alone later.
 */
export function oracleCurate(
  _type: string,
  facts: readonly PromptFact[],
  changing: ReadonlySet<string | undefined> = new Set(),
): { results: CuratorResult[] } {
  const own = facts.filter((fact) => !fact.readOnly && !changing.has(fact.body));
  const known = knownNames(
    facts.map((fact) => ({ ...fact, why: fact.why ?? undefined, howToApply: fact.howToApply ?? undefined })),
  );
  const bySubject = new Map<string, PromptFact[]>();
  // Facts of one day tie by body, not by id: ids are random, and bins packed by id made each run merge otherwise.
  for (const fact of [...own].sort(
    (a, b) => a.observed.localeCompare(b.observed) || a.body.localeCompare(b.body),
  )) {
    const subject =
      namesIn({ ...fact, why: fact.why ?? undefined, howToApply: fact.howToApply ?? undefined }, known)[0] ??
      '';
    bySubject.set(subject, [...(bySubject.get(subject) ?? []), fact]);
  }
  const results: CuratorResult[] = [];
  for (const group of bySubject.values()) {
    let bin: PromptFact[] = [];
    const flush = (): void => {
      if (bin.length >= 2)
        results.push({
          title: bin[0]!.title,
          body: bin.map((fact) => fact.body).join(' '),
          replaces: bin.map((fact) => fact.id),
        });
      bin = [];
    };
    for (const fact of group) {
      const size = bin.reduce((total, item) => total + item.body.length + 1, 0);
      if (bin.length > 0 && size + fact.body.length > ORACLE_MERGED_CHARS) flush();
      bin.push(fact);
    }
    flush();
  }
  return { results };
}
