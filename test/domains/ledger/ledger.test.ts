import t from 'tap';
import fc from 'fast-check';
import type { AppContext } from '../../../src/context.js';
import { InvalidTransitionError } from '../../../src/lib/state-machine.js';
import { advanceClock } from '../../../src/scheduler/scheduler.js';
import { balancesOf } from '../../../src/domains/ledger/ledger.service.js';
import { createTransaction, InsufficientFundsError, LedgerRuleError, type NewTransaction } from '../../../src/domains/transactions/transactions.create.js';
import { transitionTransaction } from '../../../src/domains/transactions/transactions.transition.js';
import { transactionTransitions, type TransactionStatus } from '../../../src/domains/transactions/transactions.machine.js';
import { createWithdrawal } from '../../helpers/money-in.js';
import { checkLedger, freshContext, modelBalances } from '../../helpers/ledger.js';

// The ledger rules (docs/decisions.md#ledger), checked against an independent model: balances derived from the
// transactions' amounts and statuses must equal the ledger's, and `available` never goes below zero.

const ACCOUNTS = [
  { accountId: 'acct_acme_usd', ledgerId: 'acct_acme_usd', userId: 'usr_acme', currency: 'USD' },
  { accountId: 'acct_acme_eur', ledgerId: 'acct_acme_eur', userId: 'usr_acme', currency: 'EUR' },
  { accountId: 'acct_jane_usd', ledgerId: 'acct_jane_usd', userId: 'usr_jane', currency: 'USD' },
  { accountId: 'acct_acme_usdc', ledgerId: 'acct_acme_usdc', userId: 'usr_acme', currency: 'USDC' },
] as const;

type Operation =
  | { kind: 'deposit'; account: number; amount: number; toSubBalance: boolean }
  | { kind: 'outgoing'; account: number; amount: number; fee: number }
  | { kind: 'step'; pick: number; to: TransactionStatus }
  | { kind: 'advance'; ms: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('deposit' as const), account: fc.nat(3), amount: fc.integer({ min: 1, max: 5_000_000 }), toSubBalance: fc.boolean() }),
  fc.record({ kind: fc.constant('outgoing' as const), account: fc.nat(3), amount: fc.integer({ min: 1, max: 3_000_000_000 }), fee: fc.integer({ min: 0, max: 2_000 }) }),
  fc.record({ kind: fc.constant('step' as const), pick: fc.nat(50), to: fc.constantFrom<TransactionStatus>('PROCESSING', 'COMPLETED', 'FAILED', 'PENDING') }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(500, 1000, 3000, 10_000) }),
);

function deposit(ctx: AppContext, op: Extract<Operation, { kind: 'deposit' }>): void {
  const account = ACCOUNTS[op.account]!;
  const sub = account.currency === 'USDC' && op.toSubBalance;
  const currency = sub ? 'USDC_ETH' : account.currency;
  const input: NewTransaction = {
    programmeId: 'prg_sandbox',
    userId: account.userId,
    accountId: account.accountId,
    debitAccountId: null,
    creditAccountId: sub ? 'acct_acme_usdc_ethereum' : account.ledgerId,
    direction: 'INCOMING',
    type: 'DEPOSIT',
    debitAmountMinor: BigInt(op.amount),
    debitCurrency: currency,
    creditAmountMinor: BigInt(op.amount),
    creditCurrency: currency,
  };
  createTransaction(ctx, input);
}

t.test('property: after any sequence of deposits, holds, completions and failures the ledger matches the model', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(fc.array(operation, { minLength: 1, maxLength: 30 }), (operations) => {
      runs += 1;
      const ctx = freshContext();
      try {
        if (!checkLedger(t, ctx, 'fixtures')) return false;
        const created: string[] = [];
        for (const [index, op] of operations.entries()) {
          if (op.kind === 'deposit') {
            deposit(ctx, op);
          } else if (op.kind === 'outgoing') {
            const account = ACCOUNTS[op.account]!;
            const available = modelBalances(ctx).get(account.ledgerId)!.available;
            const debit = BigInt(op.amount + op.fee);
            try {
              const row = createWithdrawal(ctx, { accountId: account.accountId, userId: account.userId, amountMinor: BigInt(op.amount), feeMinor: BigInt(op.fee), currency: account.currency });
              created.push(row.id);
              if (available < debit) throw new Error(`a debit of ${debit} was accepted with only ${available} available`);
            } catch (error) {
              if (!(error instanceof InsufficientFundsError)) throw error;
              if (available >= debit) throw new Error(`a debit of ${debit} was refused with ${available} available`);
            }
          } else if (op.kind === 'step') {
            const open = (ctx.db.prepare("SELECT id, status FROM transactions WHERE status IN ('PENDING', 'PROCESSING') ORDER BY created_at_ms, id").all() as Array<{ id: string; status: TransactionStatus }>);
            if (open.length === 0) continue;
            const target = open[op.pick % open.length]!;
            const legal = transactionTransitions[target.status].includes(op.to);
            try {
              transitionTransaction(ctx, target.id, op.to);
              if (!legal) throw new Error(`illegal ${target.status} -> ${op.to} was accepted`);
            } catch (error) {
              if (!(error instanceof InvalidTransitionError) || legal) throw error;
            }
          } else {
            advanceClock(ctx, op.ms);
          }
          if (!checkLedger(t, ctx, `after operation ${index} (${op.kind})`)) return false;
        }
        // Let every rail step and sweep run out: the ledger still matches and nothing is left negative.
        advanceClock(ctx, 60_000);
        return checkLedger(t, ctx, 'settled');
      } finally {
        ctx.db.close();
      }
    }),
    { seed: 20260301, numRuns: 40 },
  );
  t.equal(runs, 40, 'ran every generated sequence');
});

t.test('the model check is not vacuous: a tampered entry is caught', async (t) => {
  const ctx = freshContext();
  t.teardown(() => ctx.db.close());
  const failures: string[] = [];
  const recorder = { fail: (message: string) => failures.push(message) };
  t.ok(checkLedger(recorder, ctx, 'clean'), 'clean fixtures pass');
  ctx.db.prepare("UPDATE ledger_entries SET amount_minor = amount_minor + 1 WHERE id = (SELECT MAX(id) FROM ledger_entries WHERE account_id = 'acct_jane_usd')").run();
  t.notOk(checkLedger(recorder, ctx, 'tampered'), 'a changed entry is reported');
  t.ok(failures.some((message) => message.includes('acct_jane_usd')));
});

t.test('the model check is not vacuous: an in_flight flag out of step with its transaction is caught', async (t) => {
  const ctx = freshContext();
  t.teardown(() => ctx.db.close());
  const failures: string[] = [];
  const recorder = { fail: (message: string) => failures.push(message) };
  const held = createWithdrawal(ctx, { accountId: 'acct_jane_usd', userId: 'usr_jane', amountMinor: 1_000n, feeMinor: 25n });
  t.ok(checkLedger(recorder, ctx, 'held'), 'a hold in flight passes');
  t.equal((ctx.db.prepare('SELECT COUNT(*) AS n FROM ledger_entries WHERE transaction_id = ? AND in_flight = 1').get(held.id) as { n: number }).n, 2, 'principal and fee are in flight');
  ctx.db.prepare('UPDATE ledger_entries SET in_flight = 0 WHERE transaction_id = ?').run(held.id);
  t.notOk(checkLedger(recorder, ctx, 'cleared'), 'a hold no longer flagged is reported');
  t.ok(failures.some((message) => /in_flight flag/.test(message)), 'as a wrong flag');
  t.ok(failures.some((message) => message.includes('acct_jane_usd ledger')), 'and as a wrong current balance');
});

t.test('fixture history: every account balance is reached without ever overdrawing, in posting order', async (t) => {
  const ctx = freshContext();
  t.teardown(() => ctx.db.close());
  t.ok(checkLedger(t, ctx, 'history'));
  const accounts = ctx.db.prepare('SELECT DISTINCT account_id FROM ledger_entries').all() as Array<{ account_id: string }>;
  for (const { account_id } of accounts) {
    // Running balance in time order (what a statement shows) never dips below zero.
    const entries = ctx.db.prepare('SELECT amount_minor FROM ledger_entries WHERE account_id = ? ORDER BY posted_at_ms, id').all(account_id) as Array<{ amount_minor: number }>;
    let running = 0;
    let lowest = 0;
    for (const entry of entries) {
      running += entry.amount_minor;
      lowest = Math.min(lowest, running);
    }
    t.equal(lowest, 0, `${account_id} never below zero in time order`);
  }
  t.equal(balancesOf(ctx, 'acct_acme_usd').currentMinor, 8_806_280n, 'acme USD opens with 88,062.80');
  t.equal(balancesOf(ctx, 'acct_acme_eur').currentMinor, 1_044_600n, 'acme EUR opens with 10,446.00');
  t.equal(balancesOf(ctx, 'acct_acme_usdc').currentMinor, 29_999_000_000n, 'acme USDC opens with 29,999.000000');
  t.equal(balancesOf(ctx, 'acct_jane_usd').currentMinor, 1_309_850n, 'jane USD opens with 13,098.50');
  t.equal(balancesOf(ctx, 'acct_acme_usdc_ethereum').currentMinor, 0n, 'sub-balances are swept empty');
  const events = ctx.db.prepare('SELECT COUNT(*) AS n FROM outbox').get() as { n: number };
  t.equal(events.n, 0, 'history writes no events');
  const jobs = ctx.db.prepare('SELECT COUNT(*) AS n FROM jobs').get() as { n: number };
  t.equal(jobs.n, 0, 'history schedules no rail steps');
});

t.test('core rules: bad amounts and mismatched currencies are refused; a failed write leaves nothing', async (t) => {
  const ctx = freshContext();
  t.teardown(() => ctx.db.close());
  const count = () => (ctx.db.prepare('SELECT (SELECT COUNT(*) FROM transactions) + (SELECT COUNT(*) FROM ledger_entries) + (SELECT COUNT(*) FROM outbox) AS n').get() as { n: number }).n;
  const before = count();
  const thrown = (fn: () => unknown): unknown => {
    try {
      fn();
    } catch (error) {
      return error;
    }
    return undefined;
  };
  t.ok(thrown(() => createWithdrawal(ctx, { accountId: 'acct_jane_usd', userId: 'usr_jane', amountMinor: 0n })) instanceof LedgerRuleError, 'a zero amount');
  t.ok(thrown(() => createWithdrawal(ctx, { accountId: 'acct_jane_usd', userId: 'usr_jane', amountMinor: 100n, currency: 'EUR' })) instanceof LedgerRuleError, 'EUR entries on a USD account');
  t.ok(thrown(() => createWithdrawal(ctx, { accountId: 'acct_jane_usd', userId: 'usr_jane', amountMinor: 1_309_851n })) instanceof InsufficientFundsError, 'one cent more than available');
  t.ok(thrown(() => createWithdrawal(ctx, { accountId: 'acct_jane_usd', userId: 'usr_acme', amountMinor: 100n })) instanceof LedgerRuleError, 'another user\'s account');
  t.ok(thrown(() => createWithdrawal(ctx, { accountId: 'acct_acme_usdc_ethereum', userId: 'usr_acme', amountMinor: 100n, currency: 'USDC_ETH' })) instanceof LedgerRuleError, 'listed under a sub-balance');
  t.equal(count(), before, 'nothing written by refused creations');
  const exact = createWithdrawal(ctx, { accountId: 'acct_jane_usd', userId: 'usr_jane', amountMinor: 1_309_800n, feeMinor: 50n });
  t.equal(balancesOf(ctx, 'acct_jane_usd').availableMinor, 0n, 'the whole balance can be spent, to exactly zero');
  const failedAtCreation = createTransaction(
    ctx,
    {
      programmeId: 'prg_sandbox', userId: 'usr_jane', accountId: 'acct_jane_usd', debitAccountId: 'acct_jane_usd', creditAccountId: null,
      direction: 'OUTGOING', type: 'WITHDRAWAL', debitAmountMinor: 100n, debitCurrency: 'USD', creditAmountMinor: 100n, creditCurrency: 'USD',
    },
    { failOnInsufficientFunds: true },
  );
  t.match(failedAtCreation, { status: 'FAILED', status_code: 'INSUFFICIENT_FUNDS' });
  t.match(failedAtCreation.status_reason, /available 0\.00 USD is less than the 1\.00 USD required/);
  t.equal((ctx.db.prepare('SELECT COUNT(*) AS n FROM ledger_entries WHERE transaction_id = ?').get(failedAtCreation.id) as { n: number }).n, 0, 'no hold posted');
  t.equal(balancesOf(ctx, 'acct_jane_usd').availableMinor, 0n);
  transitionTransaction(ctx, exact.id, 'FAILED');
  t.equal(balancesOf(ctx, 'acct_jane_usd').availableMinor, 1_309_850n, 'the failed hold is released in full');
  t.ok(checkLedger(t, ctx, 'after rules'));
});
