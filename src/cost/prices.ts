/** Prices live with the model port (its cost meter); re-exported here for the cost folder's callers. */
export * from '../model/prices.js';
