/** A run that waits for money: the typed outcome every layer shares (cost/ computes it, runs carry it). */

/** Why a run waits: the typed outcome a skipped run carries in `RunSummary.waiting`. */
export interface BudgetWait {
  readonly kind: 'monthly-budget';
  /** Dollars recorded this month. */
  readonly spentUsd: number;
  readonly budgetUsd: number;
  /** ISO time the month ends (UTC) and runs start again. */
  readonly resumesAt: string;
}
