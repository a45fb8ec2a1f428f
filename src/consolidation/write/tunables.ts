/**
 * The write step's tunable: what it trades, and the file that reads it. One constant, in a file of its own all
 * the same, so that each step's tunables are found in the same place (`<step folder>/tunables.ts`).
 */
// Planning the write (`plan-write.ts`).
/**
 * Times the write is planned again when a person edited memory since it was read (people edit without the
 * lock): more keeps up with someone saving over and over during a run, each try reading the files again;
 * past it, the commit's own check (each file replaced only if it still holds what the plan read) keeps the
 * edit and the run says so.
 */
export const HAND_EDIT_RETRIES = 3;
