/**
 * The run's gather step: the new messages of its sessions digested and packed into batches (gather.ts), and
 * what the projects' CLAUDE.md / AGENTS.md already say, shown to the model as known and not kept again.
 */
import { gatherSessions, type Gathered } from './gather/gather.js';
import type { OrientedRun } from './orient-run.js';
import { readProjectDocs, type ProjectDoc } from './extraction/project-docs.js';
import type { RunContext } from './run-context.js';
import { keepOutSettings } from '../config/schema.js';
import { recordKeptOut } from './gather/keep-out.js';

/** The run once its sessions are digested. */
export interface GatheredRun extends OrientedRun {
  /** The batches planned, before extraction says how far each session got. */
  readonly planned: Gathered;
  /** The run's day (YYYY-MM-DD), for the prompt and the facts' dates. */
  readonly today: string;
  readonly projectDocs: readonly ProjectDoc[];
}

/** Digests the run's sessions and reads their projects' instruction files. */
export async function gatherStep(ctx: RunContext, run: OrientedRun): Promise<GatheredRun> {
  const { config } = ctx;
  const planned = await gatherSessions(run.scan, {
    memoryDir: ctx.space.memoryDir,
    ledger: run.ledgerLookup,
    limits: config.limits,
    maxOutputTokens: config.model.maxOutputTokens,
    externalContext: keepOutSettings(config).externalContext,
    onProgress: ctx.progress,
  });
  // A dry run writes nothing: the next run finds the same sessions and keeps them out again.
  if (!ctx.request.dryRun && planned.keptOut !== undefined && planned.keptOut.length > 0)
    await recordKeptOut(ctx.space.memoryDir, planned.keptOut, ctx.now().toISOString());
  ctx.inject('after-digest');
  const today = ctx.now().toISOString().slice(0, 10);
  const projectDocs = await readProjectDocs(planned.workingDirectories);
  return { ...run, planned, today, projectDocs };
}
