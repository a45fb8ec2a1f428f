/** The memory format and its layouts: facts, topic files, Claude Code's files, dreamd's block of MEMORY.md. */
export * from './fact-id.js';
export * from './hash.js';
export * from './topic-entry.js';
export * from './topic-file.js';
export * from './memory-index.js';
export * from './diff.js';
export * from './index-block.js';
export * from './claude-code-file.js';
export * from './foreign-files.js';
export * from './read-memory-file.js';
