/**
 * Which sessions a run keeps out of memory by what they hold (the person's `#dreamd:ignore`, and with
 * `keepOut.externalContext` a web or MCP tool), and the marks it leaves so later scans pass them by. A
 * person's own mark (`dreamd sessions exclude`) is found by the scan before any reading (orient-run.ts).
 */
import type { KeptOutMark } from '../../core/kept-out.js';
import { addKeptOut, type KeptOutEntry } from '../../space/index.js';
import type { Session } from '../../transcripts/index.js';

/** Whether a session just read is kept out, and why; undefined when it is learned from. */
export function keptOutBySession(
  session: Pick<Session, 'keepOut'>,
  settings: { readonly externalContext: boolean },
): KeptOutMark | undefined {
  const { marker, externalContext } = session.keepOut ?? {};
  if (marker !== undefined)
    return { reason: 'marker', detail: `"#dreamd:ignore" typed in message ${marker.index}` };
  if (externalContext !== undefined && settings.externalContext)
    return {
      reason: 'external-context',
      detail: `${externalContext.tool} used in message ${externalContext.index} (keepOut.externalContext)`,
    };
  return undefined;
}

/** Records the sessions a run kept out (under the run's lock), so no later scan opens them again. */
export async function recordKeptOut(
  memoryDir: string,
  keptOut: readonly { readonly sessionId: string; readonly file: string; readonly mark: KeptOutMark }[],
  at: string,
): Promise<void> {
  const marks: KeptOutEntry[] = keptOut.map(({ sessionId, file, mark }) => ({
    file,
    sessionId,
    reason: mark.reason,
    detail: mark.detail,
    at,
  }));
  await addKeptOut(memoryDir, marks);
}
