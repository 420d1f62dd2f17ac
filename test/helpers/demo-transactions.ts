import type { TestApp } from '../helper.js';
import { json, START } from '../helper.js';

// What the built-in demo makes (docs/dashboard.md#run-a-demo: its 17 steps give the same transactions as before): the demo
// run step by step in a fresh seeded session, and after each step the transactions that appeared or changed in it.
// test/fixtures/demo-transactions.json holds the record taken from the TypeScript demo before it became
// scenarios/demo.yaml (written by test/helpers/demo-transactions.generate.ts); test/emulator/demo.test.ts compares a
// run of today's demo with it.

// the seed the dashboard's demo sessions have always used (docs/dashboard.md#run-a-demo)
export const DEMO_FIXTURE_SEED = 'demo';

export interface RecordedTransaction {
  id: string;
  type: string;
  /** The account side: the credit of an incoming transaction, the debit (fee included) of an outgoing one. */
  amount: string;
  currency: string;
  status: string;
  statusCode: string | null;
}

export interface RecordedStep {
  number: number;
  /** The transactions that appeared or changed in this step, as they were at its end, oldest first. */
  transactions: RecordedTransaction[];
}

export interface DemoRecord {
  seed: string;
  clock: string;
  steps: RecordedStep[];
  /** The clock when the last step ended. */
  endedAt: string;
}

interface ListedTransaction {
  id: string;
  type: string;
  direction?: string;
  debitAmount: string;
  debitCurrency: string;
  creditAmount: string;
  creditCurrency: string;
  status: string;
  statusCode: string | null;
}

function recorded(txn: ListedTransaction): RecordedTransaction {
  const incoming = txn.type === 'DEPOSIT';
  return {
    id: txn.id,
    type: txn.type,
    amount: incoming ? txn.creditAmount : txn.debitAmount,
    currency: incoming ? txn.creditCurrency : txn.debitCurrency,
    status: txn.status,
    statusCode: txn.statusCode,
  };
}

/**
 * Create a session (by default seeded with DEMO_FIXTURE_SEED, frozen at START), and run the demo's `steps` steps in it with
 * `runStep(prefix, number)` (which must answer the status of the step's request); record what each step made.
 */
export async function recordDemo(
  sandbox: TestApp,
  steps: number,
  runStep: (prefix: string, number: number) => Promise<number>,
  session: Record<string, unknown> = { seed: DEMO_FIXTURE_SEED, clock: START },
): Promise<DemoRecord> {
  const created = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: session });
  if (created.statusCode !== 201) throw new Error(`session: ${created.statusCode} ${created.body}`);
  const prefix = `/_sessions/${json(created).id as string}`;
  // the fixtures' own transactions are not the demo's: only what is new or changed after the session started counts
  const listed = async () => {
    const data = json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/transactions?limit=500` })).data as ListedTransaction[];
    return new Map(data.map((txn) => [txn.id, JSON.stringify(recorded(txn))]));
  };
  let before = await listed();
  const record: DemoRecord = { seed: DEMO_FIXTURE_SEED, clock: START, steps: [], endedAt: '' };
  for (let number = 1; number <= steps; number += 1) {
    const status = await runStep(prefix, number);
    if (status !== 200) throw new Error(`step ${number} answered ${status}`);
    const after = await listed();
    const changed = [...after.entries()].filter(([id, value]) => before.get(id) !== value).map(([, value]) => JSON.parse(value) as RecordedTransaction);
    // the list is newest first: a step's transactions are written oldest first
    record.steps.push({ number, transactions: changed.reverse() });
    before = after;
  }
  record.endedAt = json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/clock` })).now as string;
  return record;
}

/** The demo run through its routes, POST {prefix}/_emulator/demo/steps/{n}. */
export function demoRoute(sandbox: TestApp) {
  return async (prefix: string, number: number) => (await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/demo/steps/${number}` })).statusCode;
}

/** The demo played as a scenario, POST {prefix}/_emulator/scenario/steps/{n} (a session created with scenario: demo). */
export function scenarioRoute(sandbox: TestApp) {
  return async (prefix: string, number: number) => (await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/scenario/steps/${number}` })).statusCode;
}
