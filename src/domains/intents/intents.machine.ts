import type { TransitionTable } from '../../lib/state-machine.js';

// Interface 3.2 names the states and leaves the transitions unshown; docs/money-out.md#transaction-intents fixes them:
// an intent is a preview that is committed, canceled, expires, or fails at commit (insufficient funds). Only CREATED
// moves; every other state is final.
export const INTENT_STATUSES = ['CREATED', 'EXPIRED', 'CANCELED', 'COMMITTED', 'FAILED'] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

export const intentTransitions: TransitionTable<IntentStatus> = {
  CREATED: ['COMMITTED', 'FAILED', 'CANCELED', 'EXPIRED'],
  EXPIRED: [],
  CANCELED: [],
  COMMITTED: [],
  FAILED: [],
};
