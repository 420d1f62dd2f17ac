import t from 'tap';
import { advance, AS_ACME_MULTI, AS_JANE, AS_OTHER, buildTestApp, json } from '../../helper.js';
import { expectStatus, fixturesFile, getJson } from '../../helpers/money-in.js';
import { isValidAbaRoutingNumber, isValidIban } from '../../../src/domains/deposit-instructions/rails.js';

// Interface 4.1, 2.13, 3.1, 2.2 and docs/money-in.md#deposit-instructions.

const fieldValue = (instruction: any, key: string) => instruction.fields.find((field: any) => field.key === key)?.value;

t.test('a fiat instruction: 202 PENDING, de-duplicated by key, ACTIVE in the detail after provisioning', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const url = '/v1/accounts/acct_acme_usd/deposit-instructions';

  const first = expectStatus(await sandbox.request('POST', url, { name: 'Payroll inbound', idempotencyKey: 'di-key-1' }), 202);
  t.same(first, { accountId: 'acct_acme_usd', name: 'Payroll inbound', status: 'PENDING', idempotencyKey: 'di-key-1' });

  // Interface 4.1: a retry with the same key and another name keeps the first name.
  const retry = expectStatus(await sandbox.request('POST', url, { name: 'Something else', idempotencyKey: 'di-key-1' }), 202);
  t.same(retry, first, 'the retry answers with the first name');

  // Interface 3.1: not in the account detail while provisioning.
  const before = await getJson(sandbox, '/v1/accounts/acct_acme_usd');
  t.equal(before.depositInstructions.length, 2, 'only the two fixture instructions while PENDING');

  await advance(sandbox, 1999);
  t.equal((await getJson(sandbox, '/v1/accounts/acct_acme_usd')).depositInstructions.length, 2, 'still provisioning 1 ms before the delay');
  await advance(sandbox, 1);
  const after = await getJson(sandbox, '/v1/accounts/acct_acme_usd');
  t.equal(after.depositInstructions.length, 3, 'exactly one instruction for the two requests');
  const created = after.depositInstructions[2];
  t.equal(created.status, 'ACTIVE');
  t.same(created.rail, { type: 'US.USD.ACH', label: 'ACH' });
  t.same(created.supportedCurrencies, ['USD']);
  t.equal(created.createdAt, '2026-03-01T12:00:00.000Z', 'createdAt is the request time');
  t.equal(created.updatedAt, '2026-03-01T12:00:02.000Z', 'updatedAt is the provisioning time');
  t.equal(fieldValue(created, 'accountHolderName'), 'Acme Robotics LLC');
  t.ok(isValidAbaRoutingNumber(fieldValue(created, 'routingNumber')), `routing number ${fieldValue(created, 'routingNumber')} has a valid ABA check digit`);
  t.match(fieldValue(created, 'accountNumber'), /^\d{12}$/);
  t.match(created.id, /^di_/);

  // A new key is a new instruction even with the same name (names need not be unique).
  expectStatus(await sandbox.request('POST', url, { name: 'Payroll inbound', idempotencyKey: 'di-key-2' }), 202);
  await advance(sandbox, 2000);
  const third = (await getJson(sandbox, '/v1/accounts/acct_acme_usd')).depositInstructions;
  t.equal(third.length, 4);
  t.not(fieldValue(third[3], 'accountNumber'), fieldValue(third[2], 'accountNumber'), 'fresh numbers for each instruction');

  // A MULTI_USER key acting for acme sees the same account.
  expectStatus(await sandbox.request('POST', url, { name: 'Via multi key', idempotencyKey: 'di-key-3' }, AS_ACME_MULTI), 202);
});

t.test('EUR instructions get a SEPA IBAN with valid check digits and a BIC', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_eur/deposit-instructions', { name: 'EU customers', idempotencyKey: 'eur-1' }), 202);
  await advance(sandbox, 2000);
  const instructions = (await getJson(sandbox, '/v1/accounts/acct_acme_eur')).depositInstructions;
  const created = instructions.at(-1);
  t.equal(created.rail.type, 'EU.EUR.SEPA');
  const iban = fieldValue(created, 'iban');
  t.match(iban, /^DE\d{20}$/);
  t.ok(isValidIban(iban), `${iban} passes the mod-97 check`);
  t.notOk(isValidIban(iban.slice(0, 2) + ((Number(iban.slice(2, 4)) + 1) % 100).toString().padStart(2, '0') + iban.slice(4)), 'the check is not vacuous');
  t.equal(fieldValue(created, 'bic'), 'SBXEDEFFXXX');
});

t.test('errors: 409 provider not ready, 404, 403, body validation', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const body = { name: 'x', idempotencyKey: 'k' };

  const notReady = expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_gbp/deposit-instructions', body), 409);
  t.equal(notReady.errorCode, 'INVALID_REQUEST');
  t.match(notReady.message, /provider/);

  const unknown = expectStatus(await sandbox.request('POST', '/v1/accounts/acct_nope/deposit-instructions', body), 404);
  t.equal(unknown.errorCode, 'NOT_FOUND');
  const otherProgramme = expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_usd/deposit-instructions', body, AS_OTHER), 404);
  t.equal(otherProgramme.errorCode, 'NOT_FOUND');
  const otherUser = expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_usd/deposit-instructions', body, AS_JANE), 403);
  t.equal(otherUser.errorCode, 'FORBIDDEN');

  const url = '/v1/accounts/acct_acme_usd/deposit-instructions';
  const cases: Array<[string, unknown, string]> = [
    ['name of 65 characters', { name: 'n'.repeat(65), idempotencyKey: 'k' }, 'name'],
    ['empty name', { name: '', idempotencyKey: 'k' }, 'name'],
    ['name not a string', { name: 12, idempotencyKey: 'k' }, 'name'],
    ['missing idempotencyKey', { name: 'x' }, 'idempotencyKey'],
    ['an unknown field', { name: 'x', idempotencyKey: 'k', network: 'POLYGON' }, 'network'],
  ];
  for (const [label, payload, fieldRef] of cases) {
    const error = expectStatus(await sandbox.request('POST', url, payload), 400);
    t.notOk('errorCode' in error, `${label}: no errorCode (interface 7.1)`);
    t.ok(error.validationErrors.some((item: any) => item.fieldRef === fieldRef), `${label}: names ${fieldRef}`);
  }
  const ok = await sandbox.request('POST', url, { name: 'n'.repeat(64), idempotencyKey: 'k64' });
  t.equal(ok.statusCode, 202, 'a name of 64 characters is accepted');

  // Nothing was written by the failed requests.
  const requests = sandbox.ctx.db.prepare('SELECT COUNT(*) AS n FROM deposit_instruction_requests').get() as { n: number };
  t.equal(requests.n, 1);
});

t.test('stablecoin: next free network, and the address also shows on the caller\'s other stablecoin account', async (t) => {
  const fixtures = fixturesFile((f) => {
    const programme = f.programmes[0];
    programme.accounts.push({
      id: 'acct_acme_usdc_ops', userId: 'usr_acme', kind: 'STABLECOIN', currency: 'USDC', displayName: 'Acme Ops (USDC)',
      depositReconciliationId: 'RECON-ACME-USDC-OPS', createdAt: '2025-12-01T10:20:00.000Z', depositInstructions: [],
    });
  });
  const sandbox = await buildTestApp({ config: { fixtures } });
  t.teardown(sandbox.close);

  expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_usdc/deposit-instructions', { name: 'Polygon inbound', idempotencyKey: 'p1' }), 202);
  await advance(sandbox, 2000);
  const treasury = (await getJson(sandbox, '/v1/accounts/acct_acme_usdc')).depositInstructions;
  t.same(treasury.map((i: any) => i.rail.type), ['ETHEREUM.USDC', 'BASE.USDC', 'POLYGON.USDC'], 'ETHEREUM and BASE were taken: POLYGON');
  const polygon = treasury[2];
  const address = fieldValue(polygon, 'walletAddress');
  t.match(address, /^0x[0-9a-f]{40}$/);

  const ops = (await getJson(sandbox, '/v1/accounts/acct_acme_usdc_ops')).depositInstructions;
  t.equal(ops.length, 1, 'the other stablecoin account shows the new address');
  t.equal(ops[0].rail.type, 'POLYGON.USDC');
  t.equal(fieldValue(ops[0], 'walletAddress'), address, 'same address');
  t.not(ops[0].id, polygon.id, 'its own instruction id');
  t.equal(ops[0].status, 'ACTIVE');

  // Jane has no stablecoin account; her accounts are untouched.
  t.equal((await getJson(sandbox, '/v1/accounts/acct_jane_usd', AS_JANE)).depositInstructions.length, 1);

  // Every supported network now has an address on the treasury account: no provider can add another.
  const full = expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_usdc/deposit-instructions', { name: 'more', idempotencyKey: 'p2' }), 409);
  t.match(full.message, /every network/);
  // The retry of the first request still answers 202 with its name.
  t.equal(expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_usdc/deposit-instructions', { name: 'zzz', idempotencyKey: 'p1' }), 202).name, 'Polygon inbound');
});

t.test('two quick stablecoin requests take two different networks', async (t) => {
  const fixtures = fixturesFile((f) => {
    const usdc = f.programmes[0].accounts.find((a: any) => a.id === 'acct_acme_usdc');
    usdc.depositInstructions = [];
  });
  const sandbox = await buildTestApp({ config: { fixtures } });
  t.teardown(sandbox.close);
  expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_usdc/deposit-instructions', { name: 'a', idempotencyKey: 'a' }), 202);
  expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_usdc/deposit-instructions', { name: 'b', idempotencyKey: 'b' }), 202);
  await advance(sandbox, 2000);
  const rails = (await getJson(sandbox, '/v1/accounts/acct_acme_usdc')).depositInstructions.map((i: any) => i.rail.type);
  t.same(rails, ['ETHEREUM.USDC', 'BASE.USDC']);
});

t.test('determinism: the same requests on a fresh emulator give byte-identical instructions', async (t) => {
  const run = async () => {
    const sandbox = await buildTestApp();
    try {
      await sandbox.request('POST', '/v1/accounts/acct_acme_usd/deposit-instructions', { name: 'a', idempotencyKey: 'a' });
      await sandbox.request('POST', '/v1/accounts/acct_acme_usdc/deposit-instructions', { name: 'b', idempotencyKey: 'b' });
      await advance(sandbox, 2000);
      return [
        (await sandbox.request('GET', '/v1/accounts/acct_acme_usd')).body,
        (await sandbox.request('GET', '/v1/accounts/acct_acme_usdc')).body,
      ];
    } finally {
      await sandbox.close();
    }
  };
  const [first, second] = [await run(), await run()];
  t.same(first, second);
  t.equal(json({ body: first[0] } as any).depositInstructions.length, 3);
});
