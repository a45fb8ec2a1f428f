/**
 * A topic file deferred during a commit (someone kept writing it, or changed it in a way that cannot be merged):
 * the person's bytes stay, and the run's facts for that file wait in `.dreamd/pending.json` like the facts of
 * a broken file. They are part of memory meanwhile and land in the file on the next run.
 */
import { isAgentsPath } from '../memory/agents-block.js';
import { rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFERRED_FACTS_FILE, readTextIfExists } from './paths.js';
import { parseDeferredFacts, serializeDeferredFacts } from './deferred.js';
import { parseTopicFile, topicFacts } from '../memory/topic-file.js';
import { parseFactFile } from '../memory/fact-file.js';
import { typeOfTopicFile, type Fact } from '../memory/types.js';

function factsOf(text: string | null, fileName: string): Fact[] | undefined {
  if (text === null) return [];
  try {
    return topicFacts(parseTopicFile(text, fileName));
  } catch {
    return undefined;
  }
}

const sameText = (a: Fact, b: Fact): boolean =>
  a.title === b.title &&
  a.body === b.body &&
  a.why === b.why &&
  a.howToApply === b.howToApply &&
  a.status === b.status &&
  a.supersededBy === b.supersededBy;

/**
 * The facts the run meant to write to a topic file that the file (as the person left it) lacks or holds in an
 * older version. A fact the person edited by hand is theirs: it is not held back over their text.
 */
export function factsToHold(fileName: string, seen: string | null, planned: string): Fact[] {
  // AGENTS.md holds copies of facts that live in the memory files: nothing to hold, the next run writes it.
  if (isAgentsPath(fileName)) return [];
  if (typeOfTopicFile(fileName) === undefined) return factFileToHold(fileName, seen, planned);
  const ours = factsOf(planned, fileName) ?? [];
  const theirs = new Map((factsOf(seen, fileName) ?? []).map((fact) => [fact.id, fact]));
  return ours.filter((fact) => {
    const onDisk = theirs.get(fact.id);
    if (onDisk === undefined) return !fact.editedByHand;
    return !onDisk.editedByHand && !sameText(onDisk, fact);
  });
}

/**
 * A per-fact file (the `claude-code` layout's) deferred: the run's fact waits in pending unless the file as
 * the person left it holds the same fact (same id) with their own text, which is theirs to keep.
 */
function factFileToHold(fileName: string, seen: string | null, planned: string): Fact[] {
  const ours = parseFactFile(planned, fileName)?.fact;
  if (ours === undefined || ours.editedByHand) return [];
  const theirs = seen === null ? undefined : parseFactFile(seen, fileName)?.fact;
  if (theirs !== undefined && theirs.id === ours.id && (theirs.editedByHand || sameText(theirs, ours)))
    return [];
  // Held without its file name: the next write places it again, in a free name if this one is taken.
  const { file: _file, ...rest } = ours;
  return [rest];
}

/**
 * Add facts to the pending file (a fact already there is replaced: these are newer), by temp + rename. An
 * unreadable pending file is kept as `pending.json.unreadable-<time>` rather than overwritten.
 */
export async function holdInPending(memoryDir: string, facts: readonly Fact[]): Promise<void> {
  if (facts.length === 0) return;
  const file = path.join(memoryDir, ...DEFERRED_FACTS_FILE.split('/'));
  const text = await readTextIfExists(file);
  const current = parseDeferredFacts(text);
  if (current.problem !== undefined && text !== null) await rename(file, `${file}.unreadable-${Date.now()}`);
  const byId = new Map(current.facts.map((fact) => [fact.id, fact]));
  for (const fact of facts) byId.set(fact.id, fact);
  const content = serializeDeferredFacts([...byId.values()]);
  if (content === null) return;
  const temporary = `${file}.tmp-${process.pid}`;
  await unlink(temporary).catch(() => undefined);
  await writeFile(temporary, content, { flag: 'wx' });
  await rename(temporary, file);
}
