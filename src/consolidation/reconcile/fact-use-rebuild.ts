/**
 * The reads of memory in every transcript the ledger has consolidated, for a space whose
 * `.dreamd/fact-use.json` is missing (deleted, or memory that predates counting): the count is rebuilt from the
 * transcripts, once, by the run that finds it missing. A file that cannot be read is skipped (its reads are
 * lost, nothing else): it was reported when it was consolidated.
 */
import type { LimitsConfig, Space } from '../../config/schema.js';
import type { LedgerEntry } from '../../core/ledger.js';
import { collectReads, type SessionReads } from '../../space/fact-use.js';
import { locateSessionFile, readSession } from '../../transcripts/index.js';

export async function rebuildSessionReads(
  space: Space,
  entries: readonly LedgerEntry[],
  limits: Pick<LimitsConfig, 'maxSessionBytes'>,
): Promise<SessionReads[]> {
  const reads: SessionReads[] = [];
  for (const entry of entries) {
    try {
      const located = locateSessionFile(space, entry.file);
      if (located === undefined) continue;
      const session = await readSession(located.path, {
        format: located.format,
        sessionsDir: located.sessionsDir,
        maxBytes: limits.maxSessionBytes,
      });
      reads.push(collectReads(session, space.memoryDir));
    } catch {
      // Unreadable now: its reads are not counted.
    }
  }
  return reads;
}
