import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { AppContext } from '../../src/context.js';
import { balancesOf, postEntry } from '../../src/domains/ledger/ledger.service.js';
import { createTransaction, type NewTransaction } from '../../src/domains/transactions/transactions.create.js';
import { transitionTransaction } from '../../src/domains/transactions/transactions.transition.js';
import type { Party } from '../../src/domains/transactions/transactions.schema.js';

// Statement test data: movements created through the transaction core itself (creation holds, completion
// credits, failure reversals) on the emulated clock, in March 2026 — after the fixture history (January and
// February), so expectations are relative to the balance the fixtures leave, whatever it is.

/** Apps for statement tests start here, so every March 2026 day is in the past. */
export const STATEMENT_TEST_START = '2026-04-15T12:00:00.000Z';
export const ACCOUNT = 'acct_acme_usd';
export const HOLDER = 'Acme Robotics LLC';
export const PERIOD = { startDate: '2026-03-02', endDate: '2026-03-31' } as const;

export const TRICKY_PAYER = 'Weird "Quoted", Payer\nsecond line\r\nthird, "line"';
/** Only a lone carriage return: nothing else in it would make a CSV writer quote the field. */
export const LONE_CR_PAYER = 'Same Instant\rLtd';

const ms = (iso: string) => Date.parse(iso);

function payer(name: string): Party {
  return { partyType: 'PAYER', payer: { displayName: name } };
}

function beneficiary(name: string): Party {
  return { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'BUSINESS', business: { id: 'ben_statement_test', name } } };
}

function base(accountId: string): Pick<NewTransaction, 'programmeId' | 'userId' | 'accountId'> {
  return { programmeId: 'prg_sandbox', userId: 'usr_acme', accountId };
}

/** A deposit created and completed at `at` (+ `settleMs`). Returns the transaction id. */
export function deposit(
  ctx: AppContext,
  at: string,
  amountMinor: bigint,
  from: string,
  settleMs = 1000,
  accountId = ACCOUNT,
  type: 'DEPOSIT' | 'TRANSFER' | 'REFUND' = 'DEPOSIT',
): string {
  ctx.clock.freezeAt(ms(at));
  return ctx.db.transaction(() => {
    const row = createTransaction(ctx, {
      ...base(accountId),
      debitAccountId: null,
      creditAccountId: accountId,
      direction: 'INCOMING',
      type,
      debitAmountMinor: amountMinor,
      debitCurrency: 'USD',
      creditAmountMinor: amountMinor,
      creditCurrency: 'USD',
      debitParty: payer(from),
      debitRail: 'US.USD.ACH',
    });
    ctx.clock.freezeAt(ms(at) + settleMs);
    transitionTransaction(ctx, row.id, 'COMPLETED');
    return row.id;
  })();
}

type PayoutOutcome = { completeAt: string } | { failAt: string } | 'in-flight';

/** An outgoing payout holding amount + fee at `at`, then completed, failed or left PROCESSING. */
export function payout(
  ctx: AppContext,
  at: string,
  amountMinor: bigint,
  feeMinor: bigint,
  outcome: PayoutOutcome,
  to = 'Initech, LLC',
  type: 'WITHDRAWAL' | 'TRANSFER' = 'WITHDRAWAL',
): string {
  ctx.clock.freezeAt(ms(at));
  const id = ctx.db.transaction(() => {
    const row = createTransaction(ctx, {
      ...base(ACCOUNT),
      debitAccountId: ACCOUNT,
      creditAccountId: null,
      direction: 'OUTGOING',
      type,
      debitAmountMinor: amountMinor + feeMinor,
      netDebitAmountMinor: amountMinor,
      debitCurrency: 'USD',
      creditAmountMinor: amountMinor,
      creditCurrency: 'USD',
      creditParty: beneficiary(to),
      creditRail: 'US.USD.ACH',
      fees: feeMinor > 0n ? [{ type: 'PROCESSING', label: 'ACH processing fee', amountMinor: feeMinor, currency: 'USD' }] : [],
      // HOLD keeps the rail from moving it on if a test advances the clock past its scheduled steps
      railBehaviour: outcome === 'in-flight' ? 'HOLD' : 'NORMAL',
    });
    ctx.clock.freezeAt(ms(at) + 1000);
    transitionTransaction(ctx, row.id, 'PROCESSING');
    return row.id;
  })();
  if (outcome !== 'in-flight') {
    const final = 'completeAt' in outcome ? outcome.completeAt : outcome.failAt;
    ctx.clock.freezeAt(ms(final));
    ctx.db.transaction(() => transitionTransaction(ctx, id, 'completeAt' in outcome ? 'COMPLETED' : 'FAILED', {}))();
  }
  return id;
}

export interface StatementScenario {
  /** Balance of the account before any movement of the scenario (whatever the fixture history left). */
  baselineMinor: bigint;
  ids: Record<'before' | 'bigDeposit' | 'trickyDeposit' | 'paid' | 'failed' | 'inFlight' | 'sameInstantDeposit' | 'lateSettling' | 'afterPeriod', string>;
  /** For PERIOD. */
  expected: { openingMinor: bigint; creditsMinor: bigint; debitsMinor: bigint; closingMinor: bigint; entries: number };
}

/**
 * Deposits, a completed payout with a fee, a failed payout whose hold is reversed, one left in flight,
 * one that settles only after the period ends, a same-instant pair, and movements either side of PERIOD.
 * Leaves the clock frozen at STATEMENT_TEST_START.
 */
export function seedStatementScenario(ctx: AppContext): StatementScenario {
  const baselineMinor = balancesOf(ctx, ACCOUNT).availableMinor;
  const ids = {
    before: deposit(ctx, '2026-03-01T08:00:00.000Z', 10_000n, 'Before Period Co'),
    bigDeposit: deposit(ctx, '2026-03-02T09:00:00.000Z', 500_000n, 'Globex, Inc.'),
    trickyDeposit: deposit(ctx, '2026-03-02T15:30:00.000Z', 25_000n, TRICKY_PAYER),
    paid: payout(ctx, '2026-03-05T10:00:00.000Z', 120_000n, 50n, { completeAt: '2026-03-05T10:00:04.000Z' }),
    failed: payout(ctx, '2026-03-10T11:00:00.000Z', 30_091n, 1_500n, { failAt: '2026-03-10T11:00:04.000Z' }),
    inFlight: payout(ctx, '2026-03-20T08:00:00.000Z', 10_092n, 50n, 'in-flight'),
    sameInstantDeposit: deposit(ctx, '2026-03-20T08:00:00.000Z', 1_000n, LONE_CR_PAYER, 0),
    lateSettling: payout(ctx, '2026-03-31T22:00:00.000Z', 5_000n, 50n, { completeAt: '2026-04-01T09:00:00.000Z' }),
    afterPeriod: deposit(ctx, '2026-04-02T10:00:00.000Z', 7_700n, 'After Period GmbH'),
  };
  ctx.clock.freezeAt(ms(STATEMENT_TEST_START));
  const openingMinor = baselineMinor + 10_000n;
  const creditsMinor = 500_000n + 25_000n + 30_091n + 1_500n + 1_000n;
  const debitsMinor = 120_000n + 50n + 30_091n + 1_500n + 10_092n + 50n + 5_000n + 50n;
  return {
    baselineMinor,
    ids,
    expected: { openingMinor, creditsMinor, debitsMinor, closingMinor: openingMinor + creditsMinor - debitsMinor, entries: 13 },
  };
}

/**
 * `count` ledger entries on one account, `perDay` per day from `firstDay`, hung on one settled deposit
 * (fast bulk data for multi-page and page-limit tests). Returns the transaction's reference.
 */
export function bulkEntries(ctx: AppContext, accountId: string, firstDay: string, count: number, perDay: number): string {
  ctx.clock.freezeAt(ms(`${firstDay}T00:00:00.000Z`));
  return ctx.db.transaction(() => {
    const row = createTransaction(ctx, {
      ...base(accountId),
      debitAccountId: null,
      creditAccountId: null,
      direction: 'INCOMING',
      type: 'DEPOSIT',
      debitAmountMinor: 100n,
      debitCurrency: 'EUR',
      creditAmountMinor: 100n,
      creditCurrency: 'EUR',
      history: { status: 'COMPLETED', createdAt: `${firstDay}T00:00:00.000Z`, completedAt: `${firstDay}T00:00:00.000Z` },
    });
    const start = ms(`${firstDay}T00:00:00.000Z`);
    for (let i = 0; i < count; i += 1) {
      const dayIndex = Math.floor(i / perDay);
      const postedAt = new Date(start + dayIndex * 86_400_000 + 3_600_000 + (i % perDay) * 1000).toISOString();
      postEntry(ctx, {
        accountId,
        transactionId: row.id,
        kind: 'PRINCIPAL',
        amountMinor: BigInt(100 + (i % 97)),
        currency: 'EUR',
        isFee: false,
        description: `Bulk entry ${i + 1} from a counterparty with a fairly long name, Ltd.`,
        postedAt,
      });
    }
    return row.reference_number;
  })();
}

/** Thousands separators for a decimal string, written independently of the PDF renderer. */
export function grouped(decimal: string): string {
  const negative = decimal.startsWith('-');
  const [whole, fraction] = (negative ? decimal.slice(1) : decimal).split('.');
  const parts: string[] = [];
  for (let end = whole!.length; end > 0; end -= 3) parts.unshift(whole!.slice(Math.max(0, end - 3), end));
  return `${negative ? '-' : ''}${parts.join(',')}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** The text of each page of a PDF, extracted with pdfjs-dist (one text item per line). */
export async function pdfPages(bytes: Buffer): Promise<string[]> {
  const document = await getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, verbosity: 0 }).promise;
  const pages: string[] = [];
  for (let number = 1; number <= document.numPages; number += 1) {
    const page = await document.getPage(number);
    const content = await page.getTextContent();
    pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join('\n'));
  }
  await document.destroy();
  return pages;
}
