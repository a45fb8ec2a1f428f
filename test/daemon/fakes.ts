import pino from 'pino';
import {
  GatesConfig,
  LimitsConfig,
  ModelConfig,
  ServerConfig,
  WorkersConfig,
  type Config,
  type Space,
} from '../../src/config/schema.js';
import type { ConsolidateFunction, RunOptions, RunRequest, RunSummary } from '../../src/core/run.js';
import type { SpaceInspection } from '../../src/core/inspection.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

export const silentLogger = pino({ level: process.env.DREAMD_TEST_LOG ?? 'silent' });

export function makeSpace(id: string): Space {
  return {
    id,
    sessionsDir: `/nonexistent/${id}/sessions`,
    memoryDir: `/nonexistent/${id}/memory`,
    format: 'native',
  };
}

export function makeConfig(overrides: {
  redisUrl: string;
  redisPrefix: string;
  spaces?: readonly Space[];
  server?: Partial<ServerConfig>;
  workers?: Partial<WorkersConfig>;
  /** Default: a temp folder removed after the running test (a child process, with no test, passes its own). */
  stateDir?: string | undefined;
}): Config {
  return {
    source: undefined,
    redisUrl: overrides.redisUrl,
    redisPrefix: overrides.redisPrefix,
    model: ModelConfig.parse({}),
    embeddings: undefined,
    schedule: '*/10 * * * *',
    gates: GatesConfig.parse({}),
    limits: LimitsConfig.parse({}),
    server: ServerConfig.parse({ port: 0, ...overrides.server }),
    workers: WorkersConfig.parse({ backoffMs: 50, ...overrides.workers }),
    stateDir: overrides.stateDir ?? tempDirRemovedAfterTest('state'),
    spaces: overrides.spaces ?? [makeSpace('alpha')],
  };
}

export function makeSummary(space: Space, request: RunRequest): RunSummary {
  return {
    runId: `run-${space.id}-${request.jobId ?? 'local'}`,
    spaceId: space.id,
    status: request.dryRun ? 'dry-run' : 'completed',
    reason: undefined,
    sessions: ['s1', 's2'],
    added: 3,
    updated: 1,
    superseded: 2,
    quarantined: 1,
    calls: 2,
    retries: 0,
    usage: { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd: 0.002,
    model: 'fake-model',
    durationMs: 1234,
    diff: '',
    problems: [],
  };
}

export interface ConsolidateCall {
  readonly space: Space;
  readonly request: RunRequest;
  readonly options: RunOptions | undefined;
}

/**
 * A fake consolidation pipeline implementing the real ConsolidateFunction: records its calls and runs a
 * scripted behaviour per call (default: report progress through every phase and return a summary).
 */
export interface FakeConsolidate {
  readonly consolidate: ConsolidateFunction;
  readonly calls: ConsolidateCall[];
  /** Behaviour of the next calls, in order; when empty, the default behaviour. */
  readonly script: ((call: ConsolidateCall) => Promise<RunSummary>)[];
  /** Resolves when the call count reaches `count`. */
  waitForCalls(count: number): Promise<void>;
}

export function createFakeConsolidate(): FakeConsolidate {
  const calls: ConsolidateCall[] = [];
  const script: ((call: ConsolidateCall) => Promise<RunSummary>)[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const consolidate: ConsolidateFunction = async (space, request, options) => {
    const call = { space, request, options };
    calls.push(call);
    for (const waiter of waiters.filter((candidate) => calls.length >= candidate.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const behaviour = script.shift();
    if (behaviour !== undefined) return behaviour(call);
    options?.onProgress?.({ phase: 'gather', done: 1, total: 2 });
    options?.onProgress?.({ phase: 'write', done: 2, total: 2, message: 'done' });
    return makeSummary(space, request);
  };
  return {
    consolidate,
    calls,
    script,
    waitForCalls(count) {
      if (calls.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
  };
}

/** A promise with its resolve function, to block a fake run until the test lets it go. */
export function deferred<T = void>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A fake inspectSpace whose answers the test sets per space. */
export function createFakeInspection(initial: Record<string, Partial<SpaceInspection>> = {}): {
  inspectSpace: (space: Space) => Promise<SpaceInspection>;
  set(spaceId: string, inspection: Partial<SpaceInspection>): void;
  failFor(spaceId: string, error: Error): void;
} {
  const answers = new Map<string, Partial<SpaceInspection>>(Object.entries(initial));
  const failures = new Map<string, Error>();
  return {
    async inspectSpace(space) {
      const failure = failures.get(space.id);
      if (failure !== undefined) throw failure;
      return { spaceId: space.id, settledNew: 0, live: 0, broken: [], ...answers.get(space.id) };
    },
    set(spaceId, inspection) {
      answers.set(spaceId, inspection);
    },
    failFor(spaceId, error) {
      failures.set(spaceId, error);
    },
  };
}

export { eventually } from '../support/eventually.js';
