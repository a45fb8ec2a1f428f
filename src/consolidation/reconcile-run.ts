/**
 * The run's reconcile step: the facts the project's instruction files already state and those a person
 * rejected from a proposal are left out, then the write is drafted, checked for updates, curated and planned
 * once (curate-run.ts, on update-check.ts, reconcile.ts and plan-write.ts) against memory as the run read it.
 */
import { FACT_USE_FILE } from '../space/fact-use.js';
import type { SessionReads } from '../space/fact-use.js';
import { DEFAULT_CURATION, type CurationOutcome } from './curation/curate.js';
import { planAndCurate } from './curate-run.js';
import type { ExtractedRun } from './extract-run.js';
import type { ExtractedFact } from './extraction/extraction.js';
import { rebuildSessionReads } from './reconcile/fact-use-rebuild.js';
import type { WriteOptions, WritePlan } from './write/plan-write.js';
import { splitAlreadyStated } from './extraction/project-docs.js';
import { createIsRejected } from './approval/rejected-match.js';
import type { RunContext } from './run-context.js';
import { resolveRunReplaces } from './extraction/replaces.js';
import type { UpdateCheckResult } from './extraction/update-check.js';

/** What the run record keeps of the update check: its calls and what it found, not the facts. */
export type UpdateCheckSummary = Omit<UpdateCheckResult, 'candidates'>;

function checkSummary({ candidates: _facts, ...summary }: UpdateCheckResult): UpdateCheckSummary {
  return summary;
}

/** The run once its write is planned. */
export interface ReconciledRun extends ExtractedRun {
  /** Reads of memory counted again from the transcripts already consolidated (fact-use.json was missing). */
  readonly earlierReads: readonly SessionReads[];
  /** The extracted facts the project's instruction files do not state already. */
  readonly kept: readonly ExtractedFact[];
  /** The extracted facts they do state (and which file does): not kept again. */
  readonly stated: ReturnType<typeof splitAlreadyStated>['stated'];
  /** The facts reconciled with memory: `kept` less those rejected earlier from the same sessions. */
  readonly candidates: readonly ExtractedFact[];
  readonly plan: WritePlan;
  readonly curation: CurationOutcome;
  /** Notes on the types still over their budget after curation. */
  readonly overBudget: readonly string[];
  /** The update check (`update-check.ts`): calls alone and carried by curation, facts looked at, updates found, notes. */
  readonly updateCheck: UpdateCheckSummary;
}

/**
 * The run's facts as the write takes them: the run's own replacements resolved (`replaces.ts`), and those
 * the project's instruction files state or a person rejected from the same sessions, in any words, left out.
 */
function candidatesOf(
  run: ExtractedRun,
  found: readonly ExtractedFact[],
  isRejected: (candidate: ExtractedFact) => boolean,
) {
  const { kept, stated } = splitAlreadyStated(resolveRunReplaces(found), run.projectDocs);
  return { kept, stated, candidates: kept.filter((candidate) => !isRejected(candidate)) };
}

/** Leaves out what is stated or rejected already, then plans, checks and curates the write. */
export async function reconcileStep(ctx: RunContext, run: ExtractedRun): Promise<ReconciledRun> {
  const { config, space } = ctx;
  ctx.progress({ phase: 'reconcile', done: 0, total: 1 });
  // Reads of memory were counted in fact-use.json; without it (deleted, or older memory) the transcripts
  // already consolidated are read once more to count them again.
  const earlierReads = run.memory.originals.has(FACT_USE_FILE)
    ? []
    : await rebuildSessionReads(space, Object.values(run.ledger.sessions), config.limits);
  const isRejected = createIsRejected(run.rejected);
  // The draft, the plan and the run's record take the candidates as checked so far: worked out once per answer
  // of the check (the check hands back the same list when it found nothing, and the plan then keeps the draft's
  // facts).
  const worked = new Map<readonly ExtractedFact[], ReturnType<typeof candidatesOf>>();
  const candidatesFor = (found: readonly ExtractedFact[]) => {
    const known = worked.get(found);
    if (known !== undefined) return known;
    const fresh = candidatesOf(run, found, isRejected);
    worked.set(found, fresh);
    return fresh;
  };
  const { plan, curation, overBudget, checked } = await planAndCurate(
    (found) => writeOptionsOf(ctx, run, candidatesFor(found).candidates, earlierReads),
    {
      config: config.curation ?? DEFAULT_CURATION,
      model: ctx.model,
      maxCalls: config.limits.maxCallsPerRun - run.extracted.calls,
      maxOutputTokens: config.model.maxOutputTokens,
      costOf: ctx.costOf,
      signal: ctx.runOptions.signal,
    },
    run.extracted.updateCheck,
  );
  const { kept, stated, candidates } = candidatesFor(checked.candidates);
  ctx.progress({ phase: 'reconcile', done: 1, total: 1 });
  return {
    ...run,
    earlierReads,
    kept,
    stated,
    candidates,
    plan,
    curation,
    overBudget,
    updateCheck: checkSummary(checked),
  };
}

/** What the write is planned from: memory as read, the candidates, and the sessions with their reads of memory. */
function writeOptionsOf(
  ctx: RunContext,
  run: ExtractedRun,
  candidates: readonly ExtractedFact[],
  earlierReads: readonly SessionReads[],
): WriteOptions {
  const { space } = ctx;
  const { gathered, ledger } = run;
  return {
    memoryDir: space.memoryDir,
    memory: run.memory,
    candidates,
    forgotten: run.forgotten,
    gathered:
      earlierReads.length === 0 ? gathered : { ...gathered, reads: [...earlierReads, ...gathered.reads] },
    runId: ctx.runId,
    today: run.today,
    now: ctx.now(),
    consolidatedAt: (sessionId: string) => ledger.sessions[sessionId]?.consolidatedAt,
    ...(space.agentsMd === undefined
      ? {}
      : { agents: { file: space.agentsMd, budget: space.agentsMdBudget } }),
  };
}
