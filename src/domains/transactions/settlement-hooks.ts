import type { SettlementHook } from './transactions.service.js';
import { internalSweepHook } from './internal-sweep.js';
import { p2pCreditHook } from './p2p.js';

// Hooks that run after a transaction status write, inside the same SQLite transaction. Add a domain's hook
// here (one import, one entry) rather than teaching transitionTransaction about it.
export const settlementHooks: SettlementHook[] = [internalSweepHook, p2pCreditHook];
