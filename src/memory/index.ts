/** The memory directory: topic files, index, state, lock, transactions, history. */
export * from './fact-id.js';
export * from './hash.js';
export * from './paths.js';
export * from './topic-entry.js';
export * from './topic-file.js';
export * from './memory-index.js';
export * from './memory-dir.js';
export * from './ledger.js';
export * from './forgotten.js';
export * from './quarantine.js';
export * from './run-history.js';
export * from './run-summary.js';
export * from './transaction.js';
export * from './rollback.js';
export * from './forget.js';
export * from './diff.js';
export * from './lock.js';
