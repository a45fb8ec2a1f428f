import { availableParallelism, loadavg } from 'node:os';

/**
 * The line `npm test` prints when it starts and when it ends: the machine's 1, 5 and 15 minute load averages
 * and its cores, so a slow run can be read against what else ran (a load of 6 on 2 cores runs the suite about
 * three times slower than a quiet machine).
 */
export function machineLoadLine(
  moment: string,
  load: readonly number[] = loadavg(),
  cores: number = availableParallelism(),
): string {
  return `dreamd tests, ${moment}: load average ${load.map((value) => value.toFixed(2)).join(' ')} on ${cores} cores\n`;
}
