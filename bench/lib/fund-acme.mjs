// The funding both commit benchmarks start from (bench/README.md, "Scenarios"): a completed 5,000,000.00 USD deposit
// into acct_acme_usd, written through the app's own createTransaction in history mode, so every commit has funds.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src');
const { createTransaction } = await import(pathToFileURL(path.join(DIST, 'domains/transactions/transactions.create.js')).href);

/** Fund usr_acme's USD account with a deposit completed at `fundedAt` (an ISO instant). */
export function fundAcme(ctx, fundedAt) {
  createTransaction(ctx, {
    programmeId: 'prg_sandbox',
    userId: 'usr_acme',
    accountId: 'acct_acme_usd',
    debitAccountId: null,
    creditAccountId: 'acct_acme_usd',
    direction: 'INCOMING',
    type: 'DEPOSIT',
    debitAmountMinor: 500_000_000n,
    debitCurrency: 'USD',
    debitParty: { partyType: 'PAYER', payer: { displayName: 'Benchmark funding' } },
    debitRail: 'US.USD.FEDWIRE',
    creditAmountMinor: 500_000_000n,
    creditCurrency: 'USD',
    history: { status: 'COMPLETED', createdAt: fundedAt, completedAt: fundedAt },
  });
}
