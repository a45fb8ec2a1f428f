/**
 * Sessions kept out of memory: the port the scanner looks marks up through (as it does the ledger), and the
 * reasons a session is kept out. The marks live in `.dreamd/kept-out.json` (space/kept-out.ts).
 */

/**
 * Why a session is kept out: a person ran `dreamd sessions exclude` (`command`), the person typed the marker
 * in the session (`marker`), or the session read web or MCP content and `keepOut.externalContext` is on
 * (`external-context`).
 */
export const KEPT_OUT_REASONS = ['command', 'marker', 'external-context'] as const;
export type KeptOutReason = (typeof KEPT_OUT_REASONS)[number];

/** One session kept out, as the scanner and `sessions list` show it. */
export interface KeptOutMark {
  readonly reason: KeptOutReason;
  /** What was seen or done, in words: `"#dreamd:ignore" typed in message 4`, `WebFetch in message 7` … */
  readonly detail: string;
}

/** Read-only view of a space's marks: by the file as the scan names it, or by session id. */
export interface KeptOutLookup {
  get(file: string, sessionId: string | undefined): KeptOutMark | undefined;
}
