/**
 * The fact ids of one run. A run reconciles its candidates more than once: in the draft curation looks at, again
 * in the plan when the update check changed what a candidate replaces, and again after a person edits memory
 * during the run. A fact learned in the run must keep one id through all of them: curation names the facts it
 * merges by the draft's ids, and a plan that drew other ids would find none of them.
 *
 * So ids are handed out by key: the first request for a key draws a fresh random id, every later request for
 * the same key in the run gets that id back. The key says what the id is for (a candidate's whole content, a
 * curation result and what it replaces), so the same candidate gets the same id in every reconcile, whatever the
 * memory it is reconciled with and in whatever order the ids are asked for.
 */
import { newFactId } from '../../memory/index.js';

/** Gives the id of the thing `key` names: the same id for the same key, a fresh one for a new key. */
export type RunIds = (key: string) => string;

/** The id allocator of one run; `draw` makes a fresh id (default: a random `f-` id). */
export function createRunIds(draw: () => string = newFactId): RunIds {
  const ids = new Map<string, string>();
  return (key) => {
    const known = ids.get(key);
    if (known !== undefined) return known;
    const id = draw();
    ids.set(key, id);
    return id;
  };
}

/**
 * A key for {@link RunIds}: what it is for (`tag`), the fact's type and text, then whatever else tells it apart
 * (`rest`). One layout for every key, so a candidate's and a curation result's keys are built alike.
 */
export function factKey(
  tag: string,
  text: {
    readonly type: string;
    readonly title: string;
    readonly body: string;
    readonly why?: string | undefined;
    readonly howToApply?: string | undefined;
  },
  ...rest: readonly unknown[]
): string {
  return JSON.stringify([
    tag,
    text.type,
    text.title,
    text.body,
    text.why ?? null,
    text.howToApply ?? null,
    ...rest,
  ]);
}
