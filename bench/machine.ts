import { cpus, loadavg, platform, release, totalmem } from 'node:os';

/** What the figures were measured on. */
export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGb: number;
  readonly node: string;
  readonly platform: string;
  /** 1, 5 and 15 minute load averages when the benchmark started: other work on the machine skews figures. */
  readonly loadAverage: readonly number[];
}

export function describeMachine(): Machine {
  const processors = cpus();
  return {
    cpu: processors[0]?.model.trim() ?? 'unknown',
    cores: processors.length,
    memoryGb: totalmem() / 1024 ** 3,
    node: process.versions.node,
    platform: `${platform()} ${release()}`,
    loadAverage: loadavg(),
  };
}
