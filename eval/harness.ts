/**
 * `npm run eval`: runs dreamd's real pipeline (gather, extract, reconcile, write) over a dataset in the common
 * long-term-memory format, session after session as scheduled runs would, and measures the memory it makes.
 * Oracle mode (default): the fake Anthropic server answers with the reference facts of the turns each call
 * carries (`oracle.ts`). Model mode: the configured model extracts (see eval/README in the notes).
 */
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBm25Index } from '../src/search/bm25.js';
import { createRecall, type RecallResult } from '../src/agent/recall.js';
import { createTranscriptPassages } from '../src/agent/transcript-passages.js';
import { loadConfig } from '../src/config/load.js';
import { CurationConfig, type Config, type Space } from '../src/config/schema.js';
import { activeSize } from '../src/consolidation/curation/curate.js';
import type { Fact } from '../src/memory/types.js';
import { createConsolidator } from '../src/consolidation/run.js';
import { loadMemory } from '../src/space/index.js';
import { createModel } from '../src/model/index.js';
import type { ModelProvider } from '../src/model/types.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../harness/fake-anthropic-server.js';
import {
  referenceFacts,
  sessionsOf,
  type Conversation,
  type EvalSession,
  type ReferenceFact,
} from './format.js';
import { createOracle, normalise, oracleTitle, type OracleLog } from './oracle.js';
import {
  holdsText,
  holdsWords,
  instructionFigures,
  twinFigures,
  type CrossMerge,
  type InstructionMiss,
} from './instruction-figures.js';
import { countCalls, halvedAnswers, type CallsByKind } from './call-kinds.js';
import {
  duplicateFigures,
  duplicatePartners,
  isFarBack,
  isReworded,
  learnedOrder,
  ruleFigures,
  type DuplicateMiss,
  type RuleMiss,
} from './plant-figures.js';

export const HIT_AT = [1, 5, 10] as const;
/** The model the oracle's calls are priced as: dreamd's default model. */
export const ORACLE_PRICED_AS = 'claude-haiku-5-5';

export interface EvalOptions {
  readonly mode: 'oracle' | 'model';
  /** Sessions consolidated by one run (scheduled runs pick up a few sessions at a time). Default 1. */
  readonly sessionsPerRun?: number;
  /**
   * The backlog way: every session of a conversation waits before the first run, as for a new user whose
   * months of history dreamd reads at once; runs follow until none waits. `sessionsPerRun` is then unused.
   */
  readonly backlog?: boolean;
  /**
   * Token budget of one call (`limits.digestTokensPerCall`); small by default (750) so a long session spans
   * calls and later calls must see the facts of earlier ones, as in a backlog of real size. The backlog way
   * runs at dreamd's own limits unless this is given (24,000 tokens a call, 4,000 of memory list, 20 calls a
   * run): a new user's first run is made with them, and what they cut is what it measures.
   */
  readonly tokensPerCall?: number;
  /** The environment for model mode (keys, `DREAMD_MODEL*`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly log?: (line: string) => void;
  /**
   * Curation budget: active facts per type (`curation.maxFactsPerType`). Default: dreamd's default budget.
   * `Infinity` (`--budget none`): curation off, memory as it was before curation.
   */
  readonly budget?: number;
}

/** The size of active memory after a run: the eval's growth curve. */
export interface CurvePoint {
  /** Sessions consolidated so far. */
  readonly sessions: number;
  /** Reference facts in those sessions: what was learned. */
  readonly factsLearned: number;
  /** Active facts of dreamd's and their bytes (title, body, why, how to apply), all types together. */
  readonly activeFacts: number;
  readonly activeBytes: number;
}

export interface RecallHits {
  readonly questions: number;
  /** hit@k: share of questions with an answering fact (or turn) in the top k. */
  readonly dreamd: Record<string, number>;
  /**
   * dreamd's fused recall (`createRecall`'s `transcripts`): the facts and the passages of the space's
   * transcripts, a hit when an answering fact or a passage holding an evidence turn is in the top k.
   */
  readonly dreamdFused: Record<string, number>;
  /** BM25 over every turn as said ("speaker: text"), a hit when an evidence turn is in the top k. */
  readonly bm25RawTurns: Record<string, number>;
  /** BM25 over every reference fact (superseded ones too), a hit when an evidence fact is in the top k. */
  readonly bm25AllFacts: Record<string, number>;
  /**
   * Plain BM25 (one field: title and body) over the very facts dreamd's recall searches (the active ones), ties
   * by recency: what dreamd's ranking rules add is the difference with `dreamd`.
   */
  readonly bm25SameFacts: Record<string, number>;
}

/** A reference fact that did not land in memory as it should, with its session and turn. */
export interface FactMiss {
  readonly conversation: string;
  readonly sessionId: string;
  readonly turn: string;
  readonly text: string;
  /** For a wrongly merged fact, the memory fact it went into; for a duplicated one, how many copies. */
  readonly detail?: string;
}

/** A question whose answer (a fact, or a passage holding an evidence turn) dreamd's fused recall did not return in its top 10. */
export interface RecallMiss {
  readonly conversation: string;
  readonly category: string;
  readonly question: string;
  readonly evidence: readonly string[];
  /** What was expected (the evidence facts' texts) and what came first instead. */
  readonly expected: readonly string[];
  readonly first: string | undefined;
}

/** A planted update chain whose newest fact is not the one active one, link by link. */
export interface UpdateMiss {
  readonly conversation: string;
  /** Oldest first: the turn, its session, its reference text and the statuses of its copies in memory. */
  readonly chain: readonly { turn: string; sessionId: string; text: string; statuses: readonly string[] }[];
}

export interface Misses {
  readonly lost: readonly FactMiss[];
  /** Planted duplicate pairs (one fact in other words) both active as two facts. */
  readonly duplicates: readonly DuplicateMiss[];
  readonly updates: readonly UpdateMiss[];
  readonly duplicated: readonly FactMiss[];
  readonly wronglyMerged: readonly FactMiss[];
  readonly wronglySuperseded: readonly FactMiss[];
  readonly recall: readonly RecallMiss[];
  /** Planted rules taught two times or more that MEMORY.md does not list after the last run. */
  readonly rules: readonly RuleMiss[];
  /** Instructions (`dreamd_instructions`) whose newest version is not the only one active, lost, given once and gone. */
  readonly instructionsNotNewestOnly: readonly InstructionMiss[];
  readonly instructionsLost: readonly InstructionMiss[];
  readonly instructionsGivenOnceInactive: readonly InstructionMiss[];
  /** Pairs of different instructions memory joined, and near-twin rules joined. */
  readonly instructionMerges: readonly CrossMerge[];
  readonly twinsJoined: readonly CrossMerge[];
  /** Near-twin pairs not both active in facts of their own. */
  readonly twinsNotBothActive: readonly {
    readonly conversation: string;
    readonly texts: readonly string[];
  }[];
}

export interface ConversationReport {
  readonly id: string;
  /** Active facts and bytes after every tenth session (and the last). */
  readonly curve: readonly CurvePoint[];
  /** The most active facts one type held after any run (a budget must hold it down). */
  readonly mostActiveOfOneType: number;
  /** Reference facts held inside an active fact curation wrote by merging (their text kept whole). */
  readonly merged: number;
  /** Reference facts only in the archive, with a successor (superseded by a newer value). */
  readonly archivedWithSuccessor: number;
  /** Curation calls, and the facts they merged. */
  readonly curationCalls: number;
  readonly sessions: number;
  /** Consolidation runs made, and the sessions the first one consolidated (the backlog way: all, or most). */
  readonly runs: number;
  readonly sessionsInFirstRun: number;
  /** Facts of the model's answers dropped before reconcile, summed over the runs' `factsDropped`, by reason. */
  readonly factsDropped: number;
  readonly factsDroppedByReason: Record<string, number>;
  /** Sessions the last run left waiting (`unconsolidated`): never consolidated. */
  readonly unconsolidated: number;
  readonly referenceFacts: number;
  readonly keptOnce: number;
  readonly keptMoreThanOnce: number;
  readonly lost: number;
  readonly wronglyMerged: number;
  readonly wronglySuperseded: number;
  readonly updates: number;
  readonly updatesResolved: number;
  /** Chains with an older fact learned `FAR_BACK_FACTS` reference facts or more before its successor. */
  readonly farUpdates: number;
  readonly farUpdatesResolved: number;
  /**
   * Oracle mode: extracted updates whose older fact was in the call's memory list (the model could name it in
   * `replaces`), and those whose older fact was not. Null in model mode (nothing tells).
   */
  readonly olderInView: number | null;
  readonly olderOutOfView: number | null;
  /** Planted duplicate pairs (`dreamd_duplicates`), and those memory keeps as two active facts. */
  readonly duplicatePairs: number;
  readonly duplicatesKept: number;
  /**
   * Planted rules (`dreamd_rules`) and those memory counts as taught again after they were saved (the
   * repeat-correction rate); the teachings after the first and the times memory counted; the rules taught two
   * times or more and those `MEMORY.md` lists after the last run.
   */
  readonly rules: number;
  readonly rulesTaughtAgain: number;
  readonly reteachesPlanted: number;
  readonly reteachesCounted: number;
  readonly rulesTaughtTwice: number;
  readonly rulesTaughtTwiceInIndex: number;
  readonly relativeDates: number;
  readonly relativeDatesResolved: number;
  readonly memoryMdCoverage: number;
  /**
   * Instructions (`dreamd_instructions`): all, those changed at least once and of them those whose newest
   * version is the only one active, those with a version nowhere in memory or the archive, those given once and
   * of them those still active, and pairs of different instructions memory joined.
   */
  readonly instructions: number;
  readonly instructionsChanged: number;
  readonly instructionsNewestOnly: number;
  readonly instructionsLost: number;
  readonly instructionsGivenOnce: number;
  readonly instructionsGivenOnceActive: number;
  readonly instructionMerges: number;
  /** Near-twin rules (`dreamd_twins`): pairs, pairs with both active apart, pairs joined. */
  readonly twinPairs: number;
  readonly twinsBothActive: number;
  readonly twinsJoined: number;
  /** Update chains with a link whose two texts share at most one word (a name), and those resolved. */
  readonly rewordedUpdates: number;
  readonly rewordedUpdatesResolved: number;
  readonly questions: number;
  readonly calls: number;
  /** The model's calls by kind, as they reached it (extraction, update check, curation). */
  readonly callsByKind: CallsByKind;
  /**
   * Extraction answers thrown away and asked again in halves (the runs' notes): the answer stopped at the
   * output limit, or held more facts than an answer or a session may.
   */
  readonly answersHalved: { readonly outputLimit: number; readonly factLimit: number };
  readonly mostCallsForOneSession: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number | null;
  readonly recall: Record<string, RecallHits>;
  /** Tokens of the text recall returned (top 10, as the recall tool formats it), summed over the questions. */
  readonly recallTokens: { readonly fused: number; readonly facts: number };
  readonly misses: Misses;
}

/** How sessions reach the runs: one run per session (or per `sessionsPerRun`), or all waiting at once. */
export type EvalWay = 'per-session' | 'backlog';

export interface EvalReport {
  readonly mode: EvalOptions['mode'];
  readonly way: EvalWay;
  /** Sessions a run was given (the per-session way); null for the backlog. */
  readonly sessionsPerRun: number | null;
  readonly conversations: readonly ConversationReport[];
  /** The model the run is priced as (oracle mode: dreamd's default model). */
  readonly pricedAs: string;
  readonly misses: Misses;
  /** The budget the run used (facts per type); null: dreamd's default. */
  readonly budget: number | null;
  readonly totals: Omit<ConversationReport, 'id' | 'recall' | 'misses' | 'curve' | 'recallTokens'> & {
    readonly tokensPerSession: number;
    /** Tokens of the text recall returned per question (top 10), fused and facts only. */
    readonly recallTokensPerQuery: { readonly fused: number; readonly facts: number };
    readonly costPerSessionUsd: number | null;
    readonly recall: Record<string, RecallHits>;
  };
}

function content(turn: { speaker: string; text: string }): string {
  return `${turn.speaker}: ${turn.text}`;
}

export async function writeSession(dir: string, session: EvalSession): Promise<void> {
  const start = Date.parse(session.startedAt);
  const messages = session.turns.map((turn, index) => ({
    role: 'user',
    ts: new Date(start + index * 30_000).toISOString(),
    content: content(turn),
  }));
  const file = join(dir, `${session.id}.json`);
  await writeFile(
    file,
    JSON.stringify({
      id: session.id,
      startedAt: session.startedAt,
      endedAt: new Date(start + messages.length * 30_000).toISOString(),
      messages,
    }),
  );
  const old = new Date(Date.now() - 86_400_000);
  await utimes(file, old, old);
}

export function evalConfig(
  root: string,
  space: Space,
  options: EvalOptions,
  modelUrl: string | undefined,
): Config {
  const ownLimits = options.backlog === true && options.tokensPerCall === undefined;
  const tokensPerCall = options.tokensPerCall ?? 750;
  const config = loadConfig({
    env: {
      ...(options.mode === 'model'
        ? options.env
        : { ANTHROPIC_API_KEY: 'sk-ant-eval-oracle', DREAMD_MODEL: ORACLE_PRICED_AS }),
      ...(modelUrl !== undefined ? { DREAMD_MODEL_BASE_URL: modelUrl } : {}),
      DREAMD_MODEL_MAX_RETRIES: '1',
      ...(ownLimits
        ? {}
        : {
            DREAMD_DIGEST_TOKENS_PER_CALL: String(tokensPerCall),
            DREAMD_MEMORY_TOKENS_PER_CALL: String(Math.floor(tokensPerCall * 0.4)),
          }),
    },
    cwd: root,
  });
  const curation =
    options.budget === undefined
      ? config.curation
      : options.budget === Infinity
        ? CurationConfig.parse({ enabled: false })
        : CurationConfig.parse({ maxFactsPerType: options.budget });
  // One run per session: room for every call a session needs. The backlog: dreamd's budget, runs cut by it.
  const limits = ownLimits ? config.limits : { ...config.limits, maxCallsPerRun: 200 };
  return { ...config, curation, limits, spaces: [space] };
}

function emptyHits(): RecallHits {
  return {
    questions: 0,
    dreamd: {},
    dreamdFused: {},
    bm25RawTurns: {},
    bm25AllFacts: {},
    bm25SameFacts: {},
  };
}

function addHits(total: RecallHits, more: RecallHits): RecallHits {
  const sum = (a: Record<string, number>, b: Record<string, number>, weightA: number, weightB: number) =>
    Object.fromEntries(
      HIT_AT.map((k) => [
        `@${k}`,
        ((a[`@${k}`] ?? 0) * weightA + (b[`@${k}`] ?? 0) * weightB) / Math.max(1, weightA + weightB),
      ]),
    );
  return {
    questions: total.questions + more.questions,
    dreamd: sum(total.dreamd, more.dreamd, total.questions, more.questions),
    dreamdFused: sum(total.dreamdFused, more.dreamdFused, total.questions, more.questions),
    bm25RawTurns: sum(total.bm25RawTurns, more.bm25RawTurns, total.questions, more.questions),
    bm25AllFacts: sum(total.bm25AllFacts, more.bm25AllFacts, total.questions, more.questions),
    bm25SameFacts: sum(total.bm25SameFacts, more.bm25SameFacts, total.questions, more.questions),
  };
}

async function evaluateConversation(
  conversation: Conversation,
  options: EvalOptions,
): Promise<ConversationReport> {
  const log = options.log ?? (() => undefined);
  const sessions = sessionsOf(conversation);
  const facts = referenceFacts(conversation);
  const turns = new Map(
    sessions.flatMap((session) =>
      session.turns.map(
        (turn) => [turn.dia_id, { sessionId: session.id, turn, content: content(turn) }] as const,
      ),
    ),
  );
  const updates = new Map(conversation.dreamd_updates.map(([older, newer]) => [newer, older]));
  const root = await mkdtemp(join(tmpdir(), 'dreamd-eval-'));
  const space: Space = {
    id: 'eval',
    sessionsDir: join(root, 'sessions'),
    memoryDir: join(root, 'memory'),
    format: 'native',
  };
  await mkdir(space.sessionsDir, { recursive: true });
  let server: FakeAnthropicServer | undefined;
  let oracleLog: OracleLog | undefined;
  try {
    if (options.mode === 'oracle') {
      server = await startFakeAnthropicServer();
      const oracle = createOracle({
        facts,
        turns,
        updates,
        // Rules and instructions are feedback.
        rules: new Set([...conversation.dreamd_rules.flat(), ...conversation.dreamd_instructions.flat()]),
        apart: new Set([...conversation.dreamd_instructions.flat(), ...conversation.dreamd_twins.flat()]),
      });
      oracleLog = oracle.log;
      server.setDefault(oracle.reply);
    }
    const config = evalConfig(root, space, options, server?.url);
    const callsByKind: CallsByKind = { extraction: 0, updateCheck: 0, curation: 0 };
    const model: ModelProvider = countCalls(createModel(config.model), callsByKind);
    const answersHalved = { outputLimit: 0, factLimit: 0 };
    let now = new Date(sessions[0]?.startedAt ?? Date.now());
    const consolidate = createConsolidator({ config, model, now: () => now });
    const perRun = options.sessionsPerRun ?? 1;
    if (!(Number.isInteger(perRun) && perRun > 0))
      throw new Error(`sessionsPerRun ${perRun}: a whole number of sessions, 1 or more`);
    // The backlog way: one group of every session, the first run over all of them.
    const groups: EvalSession[][] = [];
    for (let index = 0; index < sessions.length; index += options.backlog === true ? sessions.length : perRun)
      groups.push(sessions.slice(index, options.backlog === true ? sessions.length : index + perRun));
    let calls = 0;
    let inputTokens = 0;
    let outputTokens = 0;
    let cost: number | null = 0;
    const prompts: string[] = [];
    const curve: CurvePoint[] = [];
    let mostActiveOfOneType = 0;
    let curationCalls = 0;
    let runs = 0;
    let sessionsInFirstRun = 0;
    let unconsolidated = 0;
    const factsDroppedByReason: Record<string, number> = {};
    let written = 0;
    for (const group of groups) {
      for (const session of group) await writeSession(space.sessionsDir, session);
      const before = written;
      written += group.length;
      now = new Date(Date.parse(group.at(-1)!.startedAt) + 86_400_000);
      // A run may leave sessions waiting (the call budget, `limits.maxCallsPerRun`): the backlog way runs again
      // until none waits, as the scheduler would; a run that consolidates nothing ends it (what waits is counted).
      for (let again = true; again;) {
        const requestsBefore = server?.requests.length ?? 0;
        const summary = await consolidate(space, { force: true, dryRun: false, trigger: 'manual' });
        if (
          summary.status === 'skipped' &&
          summary.sessions.length === 0 &&
          summary.calls === 0 &&
          summary.reason?.includes('no new') !== true
        ) {
          throw new Error(
            `${conversation.sample_id}: run over ${group.map((s) => s.id).join(', ')} skipped: ${summary.reason ?? ''}`,
          );
        }
        runs += 1;
        if (runs === 1) sessionsInFirstRun = summary.sessions.length;
        unconsolidated = summary.unconsolidated?.length ?? 0;
        for (const [reason, count] of Object.entries(summary.factsDropped ?? {}))
          factsDroppedByReason[reason] = (factsDroppedByReason[reason] ?? 0) + (count ?? 0);
        calls += summary.calls;
        const halved = halvedAnswers(summary.notes ?? []);
        answersHalved.outputLimit += halved.outputLimit;
        answersHalved.factLimit += halved.factLimit;
        inputTokens +=
          summary.usage.inputTokens + summary.usage.cacheReadTokens + summary.usage.cacheWriteTokens;
        outputTokens += summary.usage.outputTokens;
        cost = cost === null || summary.costUsd === undefined ? null : cost + summary.costUsd;
        prompts.push(...(server?.requests.slice(requestsBefore).map((request) => request.prompt) ?? []));
        curationCalls += summary.curation?.calls ?? 0;
        const size = Object.values(activeSize((await loadMemory(space.memoryDir)).facts));
        mostActiveOfOneType = Math.max(mostActiveOfOneType, ...size.map((type) => type.facts));
        const done = written - unconsolidated;
        if (Math.floor(written / 10) > Math.floor(before / 10) || written === sessions.length) {
          const learned = new Set(sessions.slice(0, done).map((session) => session.id));
          curve.push({
            sessions: done,
            factsLearned: facts.filter((fact) => learned.has(fact.sessionId)).length,
            activeFacts: size.reduce((total, type) => total + type.facts, 0),
            activeBytes: size.reduce((total, type) => total + type.bytes, 0),
          });
        }
        again =
          options.backlog === true &&
          unconsolidated > 0 &&
          (summary.sessions.length > 0 || summary.calls > 0) &&
          runs < 10 * sessions.length;
      }
    }
    log(
      `  ${conversation.sample_id}: ${sessions.length} sessions, ${runs} runs, ${calls} calls, updates whose older fact the call saw: ${oracleLog?.seenUpdates ?? 0} (missed ${oracleLog?.missedUpdates ?? 0}, of them named by the update check: ${oracleLog?.checkedUpdates ?? 0})`,
    );

    const memory = await loadMemory(space.memoryDir);
    const olderOf = new Set(conversation.dreamd_updates.map(([older]) => older));
    // Memory as a whole: the active files and the archive of what left them.
    const everything: Fact[] = [...memory.facts, ...memory.archived.map((entry) => entry.fact)];
    const mergedAway = new Set(
      memory.archived.filter((entry) => entry.reason === 'merged').map((entry) => entry.fact.id),
    );
    const byId = new Map(everything.map((fact) => [fact.id, fact]));
    const headOf = (fact: Fact): Fact | undefined => {
      let head: Fact | undefined = fact;
      for (let step = 0; head !== undefined && head.status !== 'active' && step < 1000; step += 1)
        head = head.supersededBy === undefined ? undefined : byId.get(head.supersededBy);
      return head;
    };
    const byBody = (fact: ReferenceFact) => everything.filter((entry) => entry.body === fact.text);
    /** Active facts curation wrote that hold the reference text whole, among others. */
    const holdersOf = (fact: ReferenceFact) =>
      memory.facts.filter(
        (entry) => entry.status === 'active' && entry.body !== fact.text && entry.body.includes(fact.text),
      );
    /** A copy merged away into an active fact that still holds its text: kept, not superseded. */
    const keptByMerge = (entry: Fact, fact: ReferenceFact): boolean =>
      mergedAway.has(entry.id) && (headOf(entry)?.body.includes(fact.text) ?? false);
    let mergedKept = 0;
    let archivedWithSuccessor = 0;
    let keptOnce = 0;
    let keptMoreThanOnce = 0;
    let lost = 0;
    let wronglySuperseded = 0;
    const lostFacts: ReferenceFact[] = [];
    const miss = (fact: ReferenceFact, detail?: string): FactMiss => ({
      conversation: conversation.sample_id,
      sessionId: fact.sessionId,
      turn: fact.turn,
      text: fact.text,
      ...(detail === undefined ? {} : { detail }),
    });
    const duplicatedMisses: FactMiss[] = [];
    const supersededMisses: FactMiss[] = [];
    // A planted duplicate (one fact in other words) memory kept as its partner is kept, not lost.
    const partners = duplicatePartners(conversation.dreamd_duplicates);
    const textOfTurn = new Map(facts.map((fact) => [fact.turn, fact.text]));
    // So is a rule taught again in other words, kept as another of its wordings.
    const ruleOf = new Map(conversation.dreamd_rules.flatMap((group) => group.map((turn) => [turn, group])));
    const keptAsPartner = (fact: ReferenceFact): boolean => {
      const partner = textOfTurn.get(partners.get(fact.turn) ?? '');
      const wordings = (ruleOf.get(fact.turn) ?? []).flatMap((turn) => textOfTurn.get(turn) ?? []);
      return [...(partner === undefined ? [] : [partner]), ...wordings].some((text) =>
        everything.some((entry) => entry.body.includes(text)),
      );
    };
    /** An active fact holds the text, its planted rewording or another wording of its rule. */
    const heldActive = (fact: ReferenceFact): boolean => {
      const partner = textOfTurn.get(partners.get(fact.turn) ?? '');
      const wordings = (ruleOf.get(fact.turn) ?? []).flatMap((turn) => textOfTurn.get(turn) ?? []);
      return [fact.text, ...(partner === undefined ? [] : [partner]), ...wordings].some((text) =>
        memory.facts.some((entry) => entry.status === 'active' && entry.body.includes(text)),
      );
    };
    for (const fact of facts) {
      const holders = holdersOf(fact);
      const found = [...byBody(fact).filter((entry) => !keptByMerge(entry, fact)), ...holders];
      if (holders.length > 0) mergedKept += 1;
      else if (
        found.length > 0 &&
        found.every(
          (entry) => memory.archived.some((archived) => archived.fact.id === entry.id) && entry.supersededBy,
        )
      )
        archivedWithSuccessor += 1;
      // A value that comes back (A, then B, then A again) is one superseded and one active copy: kept once.
      const active = found.filter((entry) => entry.status === 'active').length;
      if (
        found.length === 1 ||
        (found.length > 1 && active <= 1) ||
        (found.length === 0 && keptAsPartner(fact))
      )
        keptOnce += 1;
      else if (found.length > 1) {
        keptMoreThanOnce += 1;
        duplicatedMisses.push(miss(fact, `${found.length} copies`));
      } else {
        lost += 1;
        lostFacts.push(fact);
      }
      // Superseded wrongly: a copy left memory although the fact was never replaced, and nothing active holds it
      // now. A copy superseded by the same text told again (a rule taught twice, a value that came back) or by
      // its planted rewording (merged as one fact) leaves the fact in memory.
      if (found.some((entry) => entry.status !== 'active') && !olderOf.has(fact.turn) && !heldActive(fact)) {
        wronglySuperseded += 1;
        supersededMisses.push(miss(fact));
      }
    }
    // A lost fact whose session is among the sources of a fact with another reference text was merged into it.
    const mergedMisses: FactMiss[] = [];
    for (const fact of lostFacts) {
      const into = memory.facts.find(
        (entry) =>
          entry.sources.includes(fact.sessionId) &&
          facts.some(
            (other) => other !== fact && other.text === entry.body && other.sessionId !== fact.sessionId,
          ),
      );
      if (into !== undefined) mergedMisses.push(miss(fact, `into "${into.body}"`));
    }
    const wronglyMerged = mergedMisses.length;
    const merged = new Set(mergedMisses.map((entry) => entry.turn));
    const lostMisses = lostFacts.map((fact) =>
      miss(fact, merged.has(fact.turn) ? 'merged, see below' : undefined),
    );

    // Update chains: the newest of each chain active, every older one superseded.
    const newerOf = new Map(conversation.dreamd_updates.map(([older, newer]) => [older, newer]));
    const heads = conversation.dreamd_updates.map(([older]) => older).filter((older) => !updates.has(older));
    let updatesResolved = 0;
    let farUpdates = 0;
    let farUpdatesResolved = 0;
    let rewordedUpdates = 0;
    let rewordedUpdatesResolved = 0;
    const order = learnedOrder(facts);
    const updateMisses: UpdateMiss[] = [];
    for (const head of heads) {
      const chain = [head];
      while (newerOf.has(chain.at(-1)!)) chain.push(newerOf.get(chain.at(-1)!)!);
      const far = isFarBack(chain, order);
      if (far) farUpdates += 1;
      const reworded = isReworded(chain, textOfTurn);
      if (reworded) rewordedUpdates += 1;
      const statusOf = (turn: string) => {
        const fact = facts.find((entry) => entry.turn === turn);
        return fact === undefined
          ? []
          : [
              ...byBody(fact)
                .filter((entry) => !keptByMerge(entry, fact))
                .map((entry) => entry.status),
              ...holdersOf(fact).map(() => 'active' as const),
            ];
      };
      const newestActive = statusOf(chain.at(-1)!).includes('active');
      // An older value the chain comes back to (Redis, SQLite, Redis) is the newest text itself: not asked to be superseded.
      const newestText = facts.find((entry) => entry.turn === chain.at(-1))?.text;
      const oldersSuperseded = chain.slice(0, -1).every((turn) => {
        if (facts.find((entry) => entry.turn === turn)?.text === newestText) return true;
        const statuses = statusOf(turn);
        return statuses.length > 0 && !statuses.includes('active');
      });
      if (newestActive && oldersSuperseded) {
        updatesResolved += 1;
        if (far) farUpdatesResolved += 1;
        if (reworded) rewordedUpdatesResolved += 1;
      } else {
        updateMisses.push({
          conversation: conversation.sample_id,
          chain: chain.map((turn) => {
            const fact = facts.find((entry) => entry.turn === turn);
            return {
              turn,
              sessionId: fact?.sessionId ?? '',
              text: fact?.text ?? '',
              statuses: statusOf(turn),
            };
          }),
        });
      }
    }

    const duplicates = duplicateFigures(
      conversation.sample_id,
      conversation.dreamd_duplicates,
      facts,
      memory.facts,
    );

    // Relative dates: the digest sent must carry the expected resolution right after the turn's words.
    const sent = prompts.join('\n');
    const dateEntries = Object.entries(conversation.dreamd_dates);
    const relativeDatesResolved = dateEntries.filter(([turn, expected]) => {
      const entry = turns.get(turn);
      return (
        entry !== undefined &&
        sent.includes(`[${expected}]`) &&
        normalise(sent).includes(normalise(entry.content))
      );
    }).length;

    // MEMORY.md coverage and recall, per question category.
    const index = await readFile(join(space.memoryDir, 'MEMORY.md'), 'utf8').catch(() => '');
    const rules = ruleFigures(conversation.sample_id, conversation.dreamd_rules, facts, memory.facts, index);
    // Instructions and near-twin rules, over memory and the archive; a model's facts are matched by their words.
    const holds = options.mode === 'oracle' ? holdsText : holdsWords;
    const instructions = instructionFigures(
      conversation.sample_id,
      conversation.dreamd_instructions,
      facts,
      everything,
      holds,
    );
    const twins = twinFigures(conversation.sample_id, conversation.dreamd_twins, facts, everything, holds);
    const recall = createRecall({ memoryDir: space.memoryDir });
    // Fused recall, as the agent's recall tool and `dreamd memory search` run it: the facts and the passages of
    // the space's own transcripts.
    const fused = createRecall({
      memoryDir: space.memoryDir,
      transcripts: createTranscriptPassages({ space, maxBytes: config.limits.maxSessionBytes }),
    });
    let tokensFused = 0;
    let tokensFacts = 0;
    const rawTurns = [...turns.entries()];
    const bm25 = createBm25Index(rawTurns.map(([, entry]) => entry.content));
    const bm25Facts = createBm25Index(facts.map((fact) => fact.text));
    const recallMisses: RecallMiss[] = [];
    const activeFacts = memory.facts
      .filter((entry) => entry.status === 'active')
      .map((entry, position) => ({ entry, position, date: entry.updated || entry.observed }));
    const bm25Same = createBm25Index(activeFacts.map(({ entry }) => `${entry.title}\n${entry.body}`));
    const byCategory: Record<string, RecallHits> = {};
    let covered = 0;
    for (const question of conversation.qa) {
      const evidenceFacts = facts.filter((fact) => question.evidence.includes(fact.turn));
      const answer = question.answer.toLowerCase();
      const isAnswer = (title: string, text: string) =>
        options.mode === 'oracle'
          ? evidenceFacts.some(
              (fact) => fact.text === text || oracleTitle(fact) === title || text.includes(fact.text),
            )
          : `${title}\n${text}`.toLowerCase().includes(answer);
      if (
        options.mode === 'oracle'
          ? evidenceFacts.some((fact) => index.includes(oracleTitle(fact).slice(0, 60)))
          : index.toLowerCase().includes(answer)
      ) {
        covered += 1;
      }
      const factsAnswer = await recall.search!(question.question, { limit: 10, now });
      const fusedAnswer = await fused.search!(question.question, { limit: 10, now });
      const results = factsAnswer.results;
      tokensFacts += factsAnswer.tokens;
      tokensFused += fusedAnswer.tokens;
      // A passage answers when it holds an evidence turn as said (oracle mode), or the answer (model mode).
      const evidenceTurns = question.evidence.flatMap((turn) => turns.get(turn)?.content ?? []);
      const answers = (result: RecallResult) =>
        result.kind !== 'passage'
          ? isAnswer(result.title, result.text)
          : options.mode === 'oracle'
            ? evidenceTurns.some((said) => result.text.includes(said))
            : result.text.toLowerCase().includes(answer);
      const scores = bm25.score(question.question);
      const rankedTurns = rawTurns
        .map(([id], position) => ({ id, position, score: scores[position] ?? 0 }))
        .filter((entry) => entry.score > 0)
        // Ties by recency, as dreamd breaks them: the later turn first.
        .sort((a, b) => b.score - a.score || b.position - a.position)
        .map((entry) => entry.id);
      const factScores = bm25Facts.score(question.question);
      const rankedFacts = facts
        .map((fact, position) => ({ fact, position, score: factScores[position] ?? 0 }))
        .filter((entry) => entry.score > 0)
        .sort((a, b) => b.score - a.score || b.position - a.position)
        .map((entry) => entry.fact.turn);
      const sameScores = bm25Same.score(question.question);
      const rankedSame = activeFacts
        .map((item, position) => ({ ...item, score: sameScores[position] ?? 0 }))
        .filter((item) => item.score > 0)
        .sort(
          (a, b) =>
            b.score - a.score || b.date.localeCompare(a.date) || a.entry.title.localeCompare(b.entry.title),
        )
        .map((item) => item.entry);
      const hits: RecallHits = {
        questions: 1,
        dreamd: Object.fromEntries(
          HIT_AT.map((k) => [
            `@${k}`,
            results.slice(0, k).some((result) => isAnswer(result.title, result.text)) ? 1 : 0,
          ]),
        ),
        dreamdFused: Object.fromEntries(
          HIT_AT.map((k) => [`@${k}`, fusedAnswer.results.slice(0, k).some(answers) ? 1 : 0]),
        ),
        bm25RawTurns: Object.fromEntries(
          HIT_AT.map((k) => [
            `@${k}`,
            rankedTurns.slice(0, k).some((id) => question.evidence.includes(id)) ? 1 : 0,
          ]),
        ),
        bm25AllFacts: Object.fromEntries(
          HIT_AT.map((k) => [
            `@${k}`,
            rankedFacts.slice(0, k).some((id) => question.evidence.includes(id)) ? 1 : 0,
          ]),
        ),
        bm25SameFacts: {},
      };
      Object.assign(
        hits.bm25SameFacts,
        Object.fromEntries(
          HIT_AT.map((k) => [
            `@${k}`,
            rankedSame.slice(0, k).some((entry) => isAnswer(entry.title, entry.body)) ? 1 : 0,
          ]),
        ),
      );
      if (hits.dreamdFused['@10'] === 0) {
        recallMisses.push({
          conversation: conversation.sample_id,
          category: question.category,
          question: question.question,
          evidence: question.evidence,
          // A question no fact answers wants the turn itself.
          expected: evidenceFacts.length > 0 ? evidenceFacts.map((fact) => fact.text) : evidenceTurns,
          first: fusedAnswer.results[0]?.text,
        });
      }
      byCategory[question.category] = addHits(byCategory[question.category] ?? emptyHits(), hits);
      byCategory.all = addHits(byCategory.all ?? emptyHits(), hits);
    }

    const callsPerSession = new Map<string, number>();
    for (const carried of oracleLog?.callTurns ?? []) {
      for (const sessionId of new Set(carried.map((turn) => turns.get(turn)?.sessionId ?? ''))) {
        callsPerSession.set(sessionId, (callsPerSession.get(sessionId) ?? 0) + 1);
      }
    }
    return {
      id: conversation.sample_id,
      curve,
      mostActiveOfOneType,
      merged: mergedKept,
      archivedWithSuccessor,
      curationCalls,
      sessions: sessions.length,
      runs,
      sessionsInFirstRun,
      factsDropped: Object.values(factsDroppedByReason).reduce((total, count) => total + count, 0),
      factsDroppedByReason,
      unconsolidated,
      referenceFacts: facts.length,
      keptOnce,
      keptMoreThanOnce,
      lost,
      wronglyMerged,
      wronglySuperseded,
      updates: heads.length,
      updatesResolved,
      farUpdates,
      farUpdatesResolved,
      // In view: in an extraction call's memory list, or listed beside the new fact by the update check.
      olderInView: oracleLog === undefined ? null : oracleLog.seenUpdates + oracleLog.checkedUpdates,
      olderOutOfView: oracleLog === undefined ? null : oracleLog.missedUpdates - oracleLog.checkedUpdates,
      duplicatePairs: duplicates.pairs,
      duplicatesKept: duplicates.kept,
      rules: rules.rules,
      rulesTaughtAgain: rules.taughtAgain,
      reteachesPlanted: rules.reteachesPlanted,
      reteachesCounted: rules.reteachesCounted,
      rulesTaughtTwice: rules.taughtTwice,
      rulesTaughtTwiceInIndex: rules.taughtTwiceInIndex,
      relativeDates: dateEntries.length,
      relativeDatesResolved,
      memoryMdCoverage: conversation.qa.length === 0 ? 1 : covered / conversation.qa.length,
      instructions: instructions.instructions,
      instructionsChanged: instructions.changed,
      instructionsNewestOnly: instructions.newestOnly,
      instructionsLost: instructions.lost,
      instructionsGivenOnce: instructions.givenOnce,
      instructionsGivenOnceActive: instructions.givenOnceActive,
      instructionMerges: instructions.crossMerges,
      twinPairs: twins.pairs,
      twinsBothActive: twins.bothActive,
      twinsJoined: twins.joined,
      rewordedUpdates,
      rewordedUpdatesResolved,
      questions: conversation.qa.length,
      calls,
      callsByKind,
      answersHalved,
      mostCallsForOneSession: Math.max(0, ...callsPerSession.values()),
      inputTokens,
      outputTokens,
      costUsd: cost,
      recall: byCategory,
      recallTokens: { fused: tokensFused, facts: tokensFacts },
      misses: {
        lost: lostMisses,
        duplicates: duplicates.misses,
        updates: updateMisses,
        duplicated: duplicatedMisses,
        wronglyMerged: mergedMisses,
        wronglySuperseded: supersededMisses,
        recall: recallMisses,
        rules: rules.misses,
        instructionsNotNewestOnly: instructions.misses.notNewestOnly,
        instructionsLost: instructions.misses.lost,
        instructionsGivenOnceInactive: instructions.misses.givenOnceInactive,
        instructionMerges: instructions.misses.crossMerges,
        twinsJoined: twins.misses,
        twinsNotBothActive: twins.notBothActive.map((texts) => ({
          conversation: conversation.sample_id,
          texts,
        })),
      },
    };
  } finally {
    await server?.close();
    await rm(root, { recursive: true, force: true });
  }
}

export async function runEval(dataset: readonly Conversation[], options: EvalOptions): Promise<EvalReport> {
  const conversations: ConversationReport[] = [];
  for (const conversation of dataset) conversations.push(await evaluateConversation(conversation, options));
  const sum = (pick: (report: ConversationReport) => number) =>
    conversations.reduce((total, report) => total + pick(report), 0);
  const sessions = sum((report) => report.sessions);
  const questions = sum((report) => report.questions);
  const costs = conversations.map((report) => report.costUsd);
  const cost = costs.includes(null) ? null : costs.reduce<number>((total, value) => total + (value ?? 0), 0);
  const recall: Record<string, RecallHits> = {};
  for (const report of conversations) {
    for (const [category, hits] of Object.entries(report.recall))
      recall[category] = addHits(recall[category] ?? emptyHits(), hits);
  }
  const misses = (pick: (all: Misses) => readonly unknown[]) =>
    conversations.flatMap((report) => pick(report.misses));
  const nullableSum = (pick: (report: ConversationReport) => number | null) =>
    conversations.some((report) => pick(report) === null) ? null : sum((report) => pick(report) ?? 0);
  const factsDroppedByReason: Record<string, number> = {};
  for (const report of conversations)
    for (const [reason, count] of Object.entries(report.factsDroppedByReason))
      factsDroppedByReason[reason] = (factsDroppedByReason[reason] ?? 0) + count;
  return {
    mode: options.mode,
    way: options.backlog === true ? 'backlog' : 'per-session',
    sessionsPerRun: options.backlog === true ? null : (options.sessionsPerRun ?? 1),
    pricedAs: options.mode === 'oracle' ? ORACLE_PRICED_AS : (options.env?.DREAMD_MODEL ?? ORACLE_PRICED_AS),
    conversations,
    misses: {
      lost: misses((all) => all.lost) as FactMiss[],
      duplicates: misses((all) => all.duplicates) as DuplicateMiss[],
      updates: misses((all) => all.updates) as UpdateMiss[],
      duplicated: misses((all) => all.duplicated) as FactMiss[],
      wronglyMerged: misses((all) => all.wronglyMerged) as FactMiss[],
      wronglySuperseded: misses((all) => all.wronglySuperseded) as FactMiss[],
      recall: misses((all) => all.recall) as RecallMiss[],
      rules: misses((all) => all.rules) as RuleMiss[],
      instructionsNotNewestOnly: misses((all) => all.instructionsNotNewestOnly) as InstructionMiss[],
      instructionsLost: misses((all) => all.instructionsLost) as InstructionMiss[],
      instructionsGivenOnceInactive: misses((all) => all.instructionsGivenOnceInactive) as InstructionMiss[],
      instructionMerges: misses((all) => all.instructionMerges) as CrossMerge[],
      twinsJoined: misses((all) => all.twinsJoined) as CrossMerge[],
      twinsNotBothActive: misses((all) => all.twinsNotBothActive) as Misses['twinsNotBothActive'][number][],
    },
    budget: options.budget === undefined || options.budget === Infinity ? null : options.budget,
    totals: {
      mostActiveOfOneType: Math.max(0, ...conversations.map((report) => report.mostActiveOfOneType)),
      merged: sum((report) => report.merged),
      archivedWithSuccessor: sum((report) => report.archivedWithSuccessor),
      curationCalls: sum((report) => report.curationCalls),
      sessions,
      runs: sum((report) => report.runs),
      sessionsInFirstRun: sum((report) => report.sessionsInFirstRun),
      factsDropped: sum((report) => report.factsDropped),
      factsDroppedByReason,
      unconsolidated: sum((report) => report.unconsolidated),
      referenceFacts: sum((report) => report.referenceFacts),
      keptOnce: sum((report) => report.keptOnce),
      keptMoreThanOnce: sum((report) => report.keptMoreThanOnce),
      lost: sum((report) => report.lost),
      wronglyMerged: sum((report) => report.wronglyMerged),
      wronglySuperseded: sum((report) => report.wronglySuperseded),
      updates: sum((report) => report.updates),
      updatesResolved: sum((report) => report.updatesResolved),
      farUpdates: sum((report) => report.farUpdates),
      farUpdatesResolved: sum((report) => report.farUpdatesResolved),
      olderInView: nullableSum((report) => report.olderInView),
      olderOutOfView: nullableSum((report) => report.olderOutOfView),
      duplicatePairs: sum((report) => report.duplicatePairs),
      duplicatesKept: sum((report) => report.duplicatesKept),
      rules: sum((report) => report.rules),
      rulesTaughtAgain: sum((report) => report.rulesTaughtAgain),
      reteachesPlanted: sum((report) => report.reteachesPlanted),
      reteachesCounted: sum((report) => report.reteachesCounted),
      rulesTaughtTwice: sum((report) => report.rulesTaughtTwice),
      rulesTaughtTwiceInIndex: sum((report) => report.rulesTaughtTwiceInIndex),
      relativeDates: sum((report) => report.relativeDates),
      relativeDatesResolved: sum((report) => report.relativeDatesResolved),
      memoryMdCoverage:
        questions === 0 ? 1 : sum((report) => report.memoryMdCoverage * report.questions) / questions,
      instructions: sum((report) => report.instructions),
      instructionsChanged: sum((report) => report.instructionsChanged),
      instructionsNewestOnly: sum((report) => report.instructionsNewestOnly),
      instructionsLost: sum((report) => report.instructionsLost),
      instructionsGivenOnce: sum((report) => report.instructionsGivenOnce),
      instructionsGivenOnceActive: sum((report) => report.instructionsGivenOnceActive),
      instructionMerges: sum((report) => report.instructionMerges),
      twinPairs: sum((report) => report.twinPairs),
      twinsBothActive: sum((report) => report.twinsBothActive),
      twinsJoined: sum((report) => report.twinsJoined),
      rewordedUpdates: sum((report) => report.rewordedUpdates),
      rewordedUpdatesResolved: sum((report) => report.rewordedUpdatesResolved),
      questions,
      calls: sum((report) => report.calls),
      callsByKind: {
        extraction: sum((report) => report.callsByKind.extraction),
        updateCheck: sum((report) => report.callsByKind.updateCheck),
        curation: sum((report) => report.callsByKind.curation),
      },
      answersHalved: {
        outputLimit: sum((report) => report.answersHalved.outputLimit),
        factLimit: sum((report) => report.answersHalved.factLimit),
      },
      mostCallsForOneSession: Math.max(0, ...conversations.map((report) => report.mostCallsForOneSession)),
      inputTokens: sum((report) => report.inputTokens),
      outputTokens: sum((report) => report.outputTokens),
      costUsd: cost,
      tokensPerSession:
        sessions === 0
          ? 0
          : (sum((report) => report.inputTokens) + sum((report) => report.outputTokens)) / sessions,
      costPerSessionUsd: cost === null || sessions === 0 ? null : cost / sessions,
      recallTokensPerQuery: {
        fused: questions === 0 ? 0 : sum((report) => report.recallTokens.fused) / questions,
        facts: questions === 0 ? 0 : sum((report) => report.recallTokens.facts) / questions,
      },
      recall,
    },
  };
}

/** The two ways of one dataset: one run per session as scheduled runs go, and the backlog a first run reads. */
export interface BothWays {
  readonly perSession: EvalReport;
  readonly backlog: EvalReport;
}

/** Runs a dataset both ways with the same options (the backlog way ignores `sessionsPerRun`). */
export async function runEvalBothWays(
  dataset: readonly Conversation[],
  options: Omit<EvalOptions, 'backlog'>,
): Promise<BothWays> {
  const log = options.log ?? (() => undefined);
  log('one run per session:');
  const perSession = await runEval(dataset, { ...options, backlog: false });
  log('the backlog, every session waiting for the first run:');
  const backlog = await runEval(dataset, { ...options, backlog: true });
  return { perSession, backlog };
}
