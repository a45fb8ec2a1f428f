/**
 * `dreamd sessions exclude` and `include`: a person's mark that keeps one session out of memory, kept in the
 * space's `.dreamd/kept-out.json` (space/kept-out.ts), and taking it off again. The mark is written under the
 * space's lock, which every run holds from its scan to its commit: once `exclude` returns, no run reads the
 * session, and a run that was reading it has finished (what it learned stays; see the message).
 */
import { resolve } from 'node:path';
import type { Config, Space } from '../config/schema.js';
import { DreamdError } from '../errors.js';
import {
  addKeptOut,
  filesOfBatch,
  readKeptOut,
  readLedger,
  readBatchInFlight,
  removeCommandMark,
} from '../space/index.js';
import { listSessions, type SessionRow } from './session-list.js';
import { withStateLock } from './space-lock.js';

/** No session of the spaces looked at answers to what was typed. */
export class SessionNotFoundError extends DreamdError {
  override readonly name = 'SessionNotFoundError';
  constructor(
    readonly session: string,
    spaces: readonly Space[],
  ) {
    super(
      `no session ${JSON.stringify(session)} in ${spaces.length === 1 ? `space ${spaces[0]?.id}` : `spaces ${spaces.map((space) => space.id).join(', ')}`}; ` +
        'name it by its file, path or session id, as `dreamd sessions list` shows them',
    );
  }
}

/** Several sessions answer to what was typed (in several spaces, or a file name in several folders). */
export class AmbiguousSessionError extends DreamdError {
  override readonly name = 'AmbiguousSessionError';
  override readonly exitCode = 2;
}

/** What a mark or its removal did, for the command's output. */
export interface SessionMarkResult {
  readonly space: string;
  readonly file: string;
  readonly sessionId: string | null;
  /** Whether the session is kept out now, and every reason it is (a session may earn more than one). */
  readonly keptOut: boolean;
  readonly reasons: readonly { readonly reason: string; readonly detail: string }[];
  /** `exclude`: whether part of the session had been consolidated before (its facts stay in memory). */
  readonly consolidatedBefore: boolean;
  /** Whether the command changed anything (false: it was marked, or unmarked, already). */
  readonly changed: boolean;
}

/** The one row of the listing that `session` names: its file, its absolute path or its session id. */
async function findSession(
  config: Config,
  spaces: readonly Space[],
  session: string,
  cwd: string,
): Promise<{ space: Space; row: SessionRow }> {
  const { rows } = await listSessions(config, spaces);
  const path = resolve(cwd, session);
  // A kept-out file is never opened: its session id is the one its mark recorded.
  const markedIds = new Set<string>();
  for (const space of spaces)
    for (const entry of (await readKeptOut(space.memoryDir)).sessions)
      if (entry.sessionId === session) markedIds.add(`${space.id}\0${entry.file}`);
  const matches = rows.filter(
    (row) =>
      row.file === session ||
      row.path === path ||
      row.sessionId === session ||
      markedIds.has(`${row.space}\0${row.file}`),
  );
  const [first] = matches;
  if (first === undefined) throw new SessionNotFoundError(session, spaces);
  if (matches.length > 1)
    throw new AmbiguousSessionError(
      `${JSON.stringify(session)} names ${matches.length} sessions (${matches
        .map((row) => `${row.space}: ${row.file}`)
        .join('; ')}); name its space (--space) or give the file's path`,
    );
  const space = spaces.find((candidate) => candidate.id === first.space)!;
  return { space, row: first };
}

/** Every mark of the session now, in force or not. */
async function marksOf(space: Space, row: SessionRow): Promise<SessionMarkResult['reasons']> {
  const list = await readKeptOut(space.memoryDir);
  return list.sessions
    .filter(
      (entry) => entry.file === row.file || (row.sessionId !== null && entry.sessionId === row.sessionId),
    )
    .map(({ reason, detail }) => ({ reason, detail }));
}

/** Marks one session kept out (`dreamd sessions exclude`). */
export async function excludeSession(
  config: Config,
  spaces: readonly Space[],
  session: string,
  options: { readonly cwd: string; readonly now: Date },
): Promise<SessionMarkResult> {
  const { space, row } = await findSession(config, spaces, session, options.cwd);
  return withStateLock(config, space, 'sessions exclude', async () => {
    const pending = await readBatchInFlight(space.memoryDir);
    if (pending !== undefined && filesOfBatch(pending).has(row.file))
      throw new DreamdError(
        `session ${row.sessionId ?? row.file} of space ${space.id} is in message batch ${pending.batchId}, ` +
          `whose results would still bring its facts: run \`dreamd batch cancel ${space.id}\` first, then exclude it`,
      );
    const ledger = await readLedger(space.memoryDir);
    const known = row.sessionId === null ? undefined : ledger.sessions[row.sessionId];
    const before = await marksOf(space, row);
    const changed = !before.some((mark) => mark.reason === 'command');
    if (changed)
      await addKeptOut(space.memoryDir, [
        {
          file: row.file,
          ...(row.sessionId === null ? {} : { sessionId: row.sessionId }),
          reason: 'command',
          detail: `dreamd sessions exclude, ${options.now.toISOString()}`,
          at: options.now.toISOString(),
        },
      ]);
    return {
      space: space.id,
      file: row.file,
      sessionId: row.sessionId,
      keptOut: true,
      reasons: await marksOf(space, row),
      consolidatedBefore: known !== undefined && known.messageCount > 0,
      changed,
    };
  });
}

/** Takes a person's mark off one session (`dreamd sessions include`); what the session itself holds stays. */
export async function includeSession(
  config: Config,
  spaces: readonly Space[],
  session: string,
  options: { readonly cwd: string },
): Promise<SessionMarkResult> {
  const { space, row } = await findSession(config, spaces, session, options.cwd);
  return withStateLock(config, space, 'sessions include', async () => {
    const removed = await removeCommandMark(space.memoryDir, {
      file: row.file,
      ...(row.sessionId === null ? {} : { sessionId: row.sessionId }),
    });
    const left = await marksOf(space, row);
    return {
      space: space.id,
      file: row.file,
      sessionId: row.sessionId,
      keptOut: left.some(
        (mark) => mark.reason !== 'external-context' || config.keepOut?.externalContext === true,
      ),
      reasons: left,
      consolidatedBefore: false,
      changed: removed !== undefined,
    };
  });
}
