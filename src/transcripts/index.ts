/** Transcripts in: readers of native and Claude Code sessions, the scanner, and the agent-side recorder. */
export {
  readSession,
  readSessionFile,
  isInsideDirectory,
  partCapsOf,
  STREAM_NATIVE_ABOVE_BYTES,
} from './read-session.js';
export type { ReadCapsOptions, ReadSessionOptions, ReadSessionResult } from './read-session.js';
export { DEFAULT_PART_CAPS } from './normalize-message.js';
export type { PartCaps } from './normalize-message.js';
export { scanSessions, countByStatus, markDuplicateIds, SESSION_EXTENSIONS } from './scan-sessions.js';
export type { ScanEntry, ScanResult, ScanSessionsOptions } from './scan-sessions.js';
export { readSettledSessions } from './read-settled-sessions.js';
export { locateSessionFile } from './session-sources.js';
export type { LocatedSessionFile, SessionFolders } from './session-sources.js';
export { repositoryOf, createRepositoryResolver } from './repository-root.js';
export type { RepositoryOf } from './repository-root.js';
export {
  readWorkingDirectory,
  readWorkingDirectorySync,
  workingDirectoryOfLine,
} from './working-directory.js';
export type { WorkingDirectory } from './working-directory.js';
export type {
  ReadSessionRecord,
  ReadSettledOptions,
  SessionProblem,
  SettledSessions,
} from './read-settled-sessions.js';
export { createSessionRecorder, RecordableMessage } from './session-recorder.js';
export type { SessionRecorder, SessionRecorderOptions } from './session-recorder.js';
export { parseNativeTranscript, parseNativeTranscriptStream } from './native-reader.js';
export { createClaudeCodeAccumulator } from './claude-code-lines.js';
export { MAX_JSON_DEPTH } from './parse-json-text.js';
export type * from './types.js';
