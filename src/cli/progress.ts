/**
 * The progress bar of `dreamd consolidate` on a terminal (cli-progress, on stderr so stdout stays the
 * report). One bar per space, 0–100 %, each phase of a run owning a slice of it: the model calls take most of
 * a run's time, so `extract` gets the biggest slice.
 *
 * States: idle → started (`start(space)`) → updated by `update` → stopped (`stop()`); start again for the
 * next space.
 */
import cliProgress from 'cli-progress';
import type { RunPhase, RunProgress } from '../core/run.js';

/** Slice of the bar each phase fills, in percent: [start, end). */
export const PHASE_SLICES: Readonly<Record<RunPhase, readonly [number, number]>> = {
  orient: [0, 5],
  gather: [5, 25],
  extract: [25, 90],
  reconcile: [90, 95],
  write: [95, 100],
};

/** Where a progress update puts the bar, 0–100. */
export function progressPercent(progress: RunProgress): number {
  const [start, end] = PHASE_SLICES[progress.phase];
  const fraction = progress.total > 0 ? Math.min(1, Math.max(0, progress.done / progress.total)) : 1;
  return Math.round(start + (end - start) * fraction);
}

export interface RunProgressBar {
  start(spaceId: string): void;
  update(progress: RunProgress): void;
  stop(): void;
}

export interface ProgressBarOptions {
  /** Where the bar is drawn. Default process.stderr. */
  readonly stream?: NodeJS.WritableStream;
  /** Draw even when the stream is not a terminal (tests). Default false. */
  readonly noTTYOutput?: boolean;
}

/** A progress bar drawn with cli-progress. */
export function createProgressBar(options: ProgressBarOptions = {}): RunProgressBar {
  const bar = new cliProgress.SingleBar(
    {
      format: '{space} [{bar}] {percentage}% | {phase}',
      stream: options.stream ?? process.stderr,
      noTTYOutput: options.noTTYOutput ?? false,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let running = false;
  return {
    start(spaceId) {
      if (running) bar.stop();
      bar.start(100, 0, { space: spaceId, phase: 'starting' });
      running = true;
    },
    update(progress) {
      if (!running) return;
      const detail = progress.total > 1 ? ` ${progress.done}/${progress.total}` : '';
      bar.update(progressPercent(progress), { phase: `${progress.phase}${detail}` });
    },
    stop() {
      if (!running) return;
      bar.stop();
      running = false;
    },
  };
}

/**
 * Whether `consolidate` draws the bar: only on a terminal and never under --json. The bar is drawn on stderr,
 * so stderr decides: `dreamd consolidate | tee log` pipes stdout and still shows it; `2>log` hides it.
 */
export function showsProgress(io: { readonly stderrIsTty?: boolean }, json: boolean): boolean {
  return io.stderrIsTty === true && !json;
}

/** A bar that draws nothing (not a terminal, or --json). */
export const silentProgressBar: RunProgressBar = {
  start: () => undefined,
  update: () => undefined,
  stop: () => undefined,
};
