/**
 * The progress bar of `dreamd consolidate` on a terminal (cli-progress, on stderr so stdout stays the
 * report). One bar per space, 0–100 %, each phase of a run owning a slice of it: the model calls take most of
 * a run's time, so `extract` gets the biggest slice.
 *
 * States: idle → started (`start(space)`) → updated by `update` → stopped (`stop()`); start again for the
 * next space. `note(line)` works in every state: a line (a retry warning) printed above the bar, which is drawn
 * again under it.
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
  /** Prints one line of text (no newline at its end) where the bar is drawn, above the bar. */
  note(line: string): void;
}

export interface ProgressBarOptions {
  /** Where the bar is drawn. Default process.stderr. */
  readonly stream?: NodeJS.WritableStream;
  /** Draw even when the stream is not a terminal (tests). Default false. */
  readonly noTTYOutput?: boolean;
}

/** A progress bar drawn with cli-progress. */
export function createProgressBar(options: ProgressBarOptions = {}): RunProgressBar {
  const stream = options.stream ?? process.stderr;
  const bar = new cliProgress.SingleBar(
    {
      format: '{space} [{bar}] {percentage}% | {phase}',
      stream,
      noTTYOutput: options.noTTYOutput ?? false,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let running = false;
  /** What the bar shows now, to draw it again under a note. */
  let shown = { percent: 0, space: '', phase: 'starting' };
  return {
    start(spaceId) {
      if (running) bar.stop();
      shown = { percent: 0, space: spaceId, phase: 'starting' };
      bar.start(100, 0, { space: spaceId, phase: shown.phase });
      running = true;
    },
    update(progress) {
      if (!running) return;
      const detail = progress.total > 1 ? ` ${progress.done}/${progress.total}` : '';
      shown = { ...shown, percent: progressPercent(progress), phase: `${progress.phase}${detail}` };
      bar.update(shown.percent, { phase: shown.phase });
    },
    stop() {
      if (!running) return;
      bar.stop();
      running = false;
    },
    note(line) {
      // The bar clears its line when it stops; the note takes that line and the bar starts again below it.
      if (running) bar.stop();
      stream.write(`${line}\n`);
      if (running) bar.start(100, shown.percent, { space: shown.space, phase: shown.phase });
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

/** A bar that draws nothing (not a terminal, or --json); its notes are written as lines by `write`. */
export function createPlainProgress(write: (text: string) => void): RunProgressBar {
  return {
    start: () => undefined,
    update: () => undefined,
    stop: () => undefined,
    note: (line) => write(`${line}\n`),
  };
}
