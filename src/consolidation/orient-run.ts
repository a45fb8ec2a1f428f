/**
 * The run's orient step: memory as it is now, what has been consolidated (the ledger), forgotten and rejected
 * facts, the last run, a proposal awaiting decision, and the sessions with something new.
 */
import { access } from 'node:fs/promises';
import { keepOutSettings, layoutOfSpace } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import {
  createLedgerLookup,
  keptOutLookup,
  lastSuccessfulRun,
  loadMemory,
  readForgotten,
  readKeptOut,
  readLedger,
  readRejected,
  type ForgottenList,
  type Ledger,
  type LoadedMemory,
  type RejectedList,
  type RunRecord,
} from '../space/index.js';
import type { LedgerLookup } from '../memory/types.js';
import { countByStatus, scanSessions, type ScanEntry, type ScanResult } from '../transcripts/index.js';
import { batchScan } from './batch/batch.js';
import { firstOpenProposal } from './approval/proposal.js';
import type { RunContext } from './run-context.js';

/** What the space holds at the start of the run. */
export interface SpaceState {
  readonly memory: LoadedMemory;
  readonly ledger: Ledger;
  readonly forgotten: ForgottenList;
  readonly lastRun: RunRecord | undefined;
  readonly rejected: RejectedList;
  /** In approval mode, the proposal awaiting a decision and those dropped as stale; else undefined. */
  readonly proposals: Awaited<ReturnType<typeof firstOpenProposal>> | undefined;
}

/** The space's state and the sessions this run may consolidate. */
export interface OrientedRun extends SpaceState {
  readonly ledgerLookup: LedgerLookup;
  /** The scan, restricted by the batch stage (`excluded`: settled sessions left to a pending batch). */
  readonly scan: ScanResult & { readonly excluded: readonly ScanEntry[] };
  readonly counted: ReturnType<typeof countByStatus>;
}

/** Reads memory, the ledger, forgotten and rejected facts, the last run and, in approval mode, the proposals. */
export async function readSpaceState(ctx: RunContext): Promise<SpaceState> {
  const { space } = ctx;
  const [memory, ledger, forgotten, lastRun, rejected] = await Promise.all([
    loadMemory(space.memoryDir, { layout: layoutOfSpace(space), agentsMd: space.agentsMd }),
    readLedger(space.memoryDir),
    readForgotten(space.memoryDir),
    lastSuccessfulRun(space.memoryDir),
    readRejected(space.memoryDir),
  ]);
  const proposals =
    space.approve === true || space.approve === 'shared' ? await firstOpenProposal(space, memory) : undefined;
  return { memory, ledger, forgotten, lastRun, rejected, proposals };
}

/**
 * A space of one sessions directory that does not exist: a path to fix (or an agent that has not written yet),
 * said as such, before the run takes a lock or makes a folder, rather than as a run that found no new
 * messages. A space of several sources reads what each folder holds, and one not written yet holds nothing.
 */
export async function checkSessionsDir(space: RunContext['space']): Promise<void> {
  if (space.sources !== undefined) return;
  try {
    await access(space.sessionsDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return; // the scan says what else is wrong
    throw new ConfigError(
      `sessions directory ${space.sessionsDir} does not exist; create it (mkdir -p ${space.sessionsDir}) ` +
        "once the agent writes sessions there, or fix the space's sessions path",
      'spaces.sessions',
    );
  }
}

/** Lists the sessions with new messages (settled or live) that this run's batch stage leaves to it. */
export async function scanNewSessions(ctx: RunContext, state: SpaceState): Promise<OrientedRun> {
  const { config } = ctx;
  const ledgerLookup = createLedgerLookup(state.ledger);
  const scan = batchScan(
    await scanSessions({
      space: ctx.space,
      ledger: ledgerLookup,
      now: ctx.now(),
      quietMinutes: config.gates.quietMinutes,
      maxBytes: config.limits.maxSessionBytes,
      // Sessions kept out are never opened: read at the start of the run, which holds the lock the command takes.
      keptOut: keptOutLookup(await readKeptOut(ctx.space.memoryDir), keepOutSettings(config)),
    }),
    ctx.stage,
  );
  return { ...state, ledgerLookup, scan, counted: countByStatus(scan) };
}
