/**
 * The summarize step's tunable: what it trades, and the file that reads it. One constant, in a file of its own
 * all the same, so that each step's tunables are found in the same place (`<step folder>/tunables.ts`).
 */
// The slim summary a finished job keeps in Redis (`slim-summary.ts`).
/**
 * Sessions, problems and waiting sessions each listed in the job's value (the counts stay whole; the run
 * record, and `dreamd history show`, has them all): more shows more in the API and dashboard without opening
 * the record; fewer keeps each retained job's bytes in Redis small.
 */
export const SLIM_PROBLEMS = 20;
