/** Dollars: the price table, the cost of calls and runs, and the monthly budget of a space. */
export * from './prices.js';
export * from './budget.js';
