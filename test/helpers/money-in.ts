import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { DEFAULT_FIXTURES } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { createTransaction, type FeeInput } from '../../src/domains/transactions/transactions.create.js';
import { railBehaviourFor } from '../../src/domains/transactions/transactions.rail.js';
import type { TransactionRow } from '../../src/domains/transactions/transactions.schema.js';
import { json, type Identity, type TestApp } from '../helper.js';

// Helpers for the money-in tests (docs/money-in.md): the clock, listing, and outgoing transactions made with the
// core directly (the payout endpoints belong to another domain).

export async function getJson(sandbox: TestApp, url: string, as?: Identity): Promise<any> {
  const response = await sandbox.request('GET', url, undefined, as);
  if (response.statusCode !== 200) throw new Error(`GET ${url}: ${response.statusCode} ${response.body}`);
  return json(response);
}

/** Every transaction of a list query, page by page. */
export async function listAll(sandbox: TestApp, query = '', as?: Identity): Promise<any[]> {
  const out: any[] = [];
  for (let pageIndex = 0; ; pageIndex += 1) {
    const page = await getJson(sandbox, `/v1/transactions?pageSize=200&pageIndex=${pageIndex}${query ? `&${query}` : ''}`, as);
    out.push(...page.data);
    if (page.data.length < 200) return out;
  }
}

export async function balances(sandbox: TestApp, accountId: string, as?: Identity): Promise<{ current: string; available: string }> {
  return (await getJson(sandbox, `/v1/accounts/${accountId}`, as)).balances;
}

export function expectStatus(response: LightMyRequestResponse, status: number): any {
  if (response.statusCode !== status) throw new Error(`expected ${status}, got ${response.statusCode}: ${response.body}`);
  return json(response);
}

/** An outgoing withdrawal from a USD account to an external bank, created with the core. */
export function createWithdrawal(
  ctx: AppContext,
  input: { accountId: string; userId: string; amountMinor: bigint; feeMinor?: bigint; currency?: string },
): TransactionRow {
  const currency = input.currency ?? 'USD';
  const fees: FeeInput[] = input.feeMinor ? [{ type: 'PROCESSING', label: 'ACH processing fee', amountMinor: input.feeMinor, currency }] : [];
  return createTransaction(ctx, {
    programmeId: 'prg_sandbox',
    userId: input.userId,
    accountId: input.accountId,
    debitAccountId: input.accountId,
    creditAccountId: null,
    direction: 'OUTGOING',
    type: 'WITHDRAWAL',
    debitAmountMinor: input.amountMinor + (input.feeMinor ?? 0n),
    debitCurrency: currency,
    debitInstrument: { instrumentType: 'ACCOUNT', account: { id: input.accountId, displayName: null, currency } },
    creditAmountMinor: input.amountMinor,
    creditCurrency: currency,
    creditParty: { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'BUSINESS', business: { id: 'ben_test', name: 'Test Supplier' } } },
    creditRail: 'US.USD.ACH',
    creditInstrument: { instrumentType: 'BANK_ACCOUNT', bankAccount: { id: 'bi_test', displayName: null, currency, mask: '****0001' } },
    fees,
    // the amount this helper is given is the one "written": its magic cents apply (docs/decisions.md#magic-amounts)
    railBehaviour: railBehaviourFor(input.amountMinor, 2),
  });
}

/** The default fixtures as an object (an independent source for expected values). */
export function defaultFixtures(): any {
  return JSON.parse(readFileSync(DEFAULT_FIXTURES, 'utf8'));
}

/**
 * A fixtures file like the default one, changed by `edit`; returns its path (for buildTestApp's
 * `config.fixtures`).
 */
export function fixturesFile(edit: (fixtures: any) => void): string {
  const fixtures = defaultFixtures();
  edit(fixtures);
  const dir = mkdtempSync(path.join(tmpdir(), 'money-in-'));
  const file = path.join(dir, 'fixtures.json');
  writeFileSync(file, JSON.stringify(fixtures));
  return file;
}

/** Outbox events of one transaction, in order. */
export function eventsOf(ctx: AppContext, transactionId: string): Array<{ event_type: string; status: string | undefined }> {
  return (
    ctx.db.prepare('SELECT event_type, payload FROM outbox WHERE resource_id = ? ORDER BY seq').all(transactionId) as Array<{ event_type: string; payload: string }>
  ).map((row) => ({ event_type: row.event_type, status: (JSON.parse(row.payload) as { status?: string }).status }));
}
