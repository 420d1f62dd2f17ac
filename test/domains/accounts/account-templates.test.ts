import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { advance, buildTestApp, json, type TestApp } from '../../helper.js';
import { businessEntries, createUser, startEnrollment, submit, writeEntries, type NewUser } from '../../helpers/onboarding.js';
import { DEFAULT_FIXTURES } from '../../../src/config.js';
import { validateFixtures } from '../../../src/fixtures/fixtures.loader.js';
import { openTemplateAccounts } from '../../../src/domains/accounts/account-templates.js';
import { getUserRow } from '../../../src/domains/users/users.service.js';

// Accounts of onboarded users (docs/onboarding.md#accounts-of-onboarded-users): the programme's account
// templates per user type, opened when the enrollment becomes ACTIVE, with a deposit-instruction provider
// ready timeline.providerReadyMs later.

async function onboardBusiness(sandbox: TestApp, name: string): Promise<NewUser> {
  const user = await createUser(sandbox, 'BUSINESS', name);
  const requestId = await startEnrollment(sandbox, user.as);
  const written = await writeEntries(sandbox, user.as, requestId, await businessEntries(name));
  if (written.statusCode !== 200) throw new Error(written.body);
  const submitted = await submit(sandbox, user.as, requestId);
  if (submitted.statusCode !== 200) throw new Error(submitted.body);
  await advance(sandbox, 5_000);
  return user;
}

async function accountsWithDetail(sandbox: TestApp, user: NewUser) {
  const list = json(await sandbox.request('GET', '/v1/accounts', undefined, user.as));
  const details = await Promise.all(list.data.map(async (account: { id: string }) => json(await sandbox.request('GET', `/v1/accounts/${account.id}`, undefined, user.as))));
  // listed by createdAt then id (docs/decisions.md#accounts-list): accounts opened together come in id order; sorted
  // here by currency
  return details.sort((a, b) => (a.currency < b.currency ? -1 : 1));
}

t.test('BUSINESS template: a USD account with ACH and FEDWIRE, a USDC account with an ETHEREUM address; deterministic', async (t) => {
  const runs: unknown[] = [];
  for (const run of [1, 2]) {
    const sandbox = await buildTestApp();
    t.teardown(sandbox.close);
    const user = await onboardBusiness(sandbox, 'Template Works LLC');
    let accounts = await accountsWithDetail(sandbox, user);
    t.same(accounts.map((account) => [account.currency, account.depositInstructions.length]), [['USD', 0], ['USDC', 0]], `run ${run}: accounts at activation`);
    for (const account of accounts) {
      const early = await sandbox.request('POST', `/v1/accounts/${account.id}/deposit-instructions`, { name: 'x', idempotencyKey: 'k' }, user.as);
      t.equal(early.statusCode, 409, `${account.currency}: provider not ready`);
    }
    await advance(sandbox, 2_000);
    accounts = await accountsWithDetail(sandbox, user);
    t.same(
      accounts.map((account) => account.depositInstructions.map((instruction: { rail: { type: string }; status: string }) => [instruction.rail.type, instruction.status])),
      [[['US.USD.ACH', 'ACTIVE'], ['US.USD.FEDWIRE', 'ACTIVE']], [['ETHEREUM.USDC', 'ACTIVE']]],
    );
    const address = accounts[1].depositInstructions[0].fields.find((field: { key: string }) => field.key === 'walletAddress').value;
    t.match(address, /^0x[0-9a-f]{40}$/);
    const usdc = await sandbox.request('POST', `/v1/accounts/${accounts[1].id}/deposit-instructions`, { name: 'Base', idempotencyKey: 'k2' }, user.as);
    t.equal(usdc.statusCode, 202, 'ready: a further address can be requested');
    runs.push(accounts);
  }
  t.same(runs[0], runs[1], 'same seed and requests: the same ids, numbers and addresses');
});

t.test('activation through the control plane opens the accounts once; revoke keeps them; a second call opens nothing', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const user = await createUser(sandbox, 'PERSON', 'Forced Approval');
  const requestId = await startEnrollment(sandbox, user.as);
  const { personEntries } = await import('../../helpers/onboarding.js');
  await writeEntries(sandbox, user.as, requestId, await personEntries('Forced Approval'));
  await submit(sandbox, user.as, requestId);
  const forced = await sandbox.app.inject({ method: 'POST', url: `/_emulator/information-requests/${requestId}/decision`, payload: { decision: 'APPROVED' } });
  t.equal(forced.statusCode, 200, forced.body);
  t.equal(json(await sandbox.request('GET', '/v1/accounts', undefined, user.as)).totalRecords, 1, 'opened by the forced approval');

  const revoked = await sandbox.app.inject({ method: 'POST', url: `/_emulator/enrollment/${user.userId}/revoke`, payload: {} });
  t.equal(revoked.statusCode, 200, revoked.body);
  t.equal(json(await sandbox.request('GET', '/v1/accounts', undefined, user.as)).totalRecords, 1, 'revocation closes nothing');
  t.same(openTemplateAccounts(sandbox.ctx, getUserRow(sandbox.ctx, user.userId)!), [], 'an activation again opens no second set');
  await advance(sandbox, 10_000);
  t.equal(json(await sandbox.request('GET', '/v1/accounts', undefined, user.as)).totalRecords, 1);
});

t.test('an account made ready early (as the control plane can) still receives its template instructions, once', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const user = await createUser(sandbox, 'PERSON', 'Early Ready');
  const requestId = await startEnrollment(sandbox, user.as);
  const { personEntries } = await import('../../helpers/onboarding.js');
  await writeEntries(sandbox, user.as, requestId, await personEntries('Early Ready'));
  await submit(sandbox, user.as, requestId);
  await advance(sandbox, 5_000);
  const [account] = await accountsWithDetail(sandbox, user);
  // what a control-plane readiness switch writes (the route itself belongs to the control plane)
  sandbox.ctx.db.prepare('UPDATE accounts SET provider_ready = 1 WHERE id = ?').run(account.id);
  const requested = await sandbox.request('POST', `/v1/accounts/${account.id}/deposit-instructions`, { name: 'Mine', idempotencyKey: 'mine' }, user.as);
  t.equal(requested.statusCode, 202, 'ready: accepted before the timer');
  await advance(sandbox, 2_000);
  const [ready] = await accountsWithDetail(sandbox, user);
  t.same(
    ready.depositInstructions.map((instruction: { name: string; rail: { type: string } }) => instruction.rail.type),
    ['US.USD.ACH', 'US.USD.ACH'],
    'the template instruction (issued at the timer although the account was ready) and the requested one',
  );
  const { runProviderReady } = await import('../../../src/domains/accounts/account-templates.js');
  runProviderReady(sandbox.ctx, { accounts: [{ accountId: account.id, instructions: [{ name: 'USD ACH', rail: 'US.USD.ACH' }] }] });
  t.equal((await accountsWithDetail(sandbox, user))[0].depositInstructions.length, 2, 'the job again issues nothing');
});

t.test('a rejected review opens nothing; fixture users keep their fixture accounts; a fixture providerReady:false stays so', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const user = await onboardBusiness(sandbox, 'Please REJECT Me Inc');
  t.equal(json(await sandbox.request('GET', '/v1/enrollment', undefined, user.as)).status, 'INACTIVE');
  t.equal(json(await sandbox.request('GET', '/v1/accounts', undefined, user.as)).totalRecords, 0, 'no accounts after a rejection');
  t.equal(json(await sandbox.request('GET', '/v1/accounts')).totalRecords, 4, 'usr_acme still has its four fixture accounts');
  await advance(sandbox, 60_000);
  const gbp = await sandbox.request('POST', '/v1/accounts/acct_acme_gbp/deposit-instructions', { name: 'GBP', idempotencyKey: 'g' });
  t.equal(gbp.statusCode, 409, 'the fixture account with providerReady false is untouched by the clock');
});

t.test('fixtures: accountTemplates and timeline.providerReadyMs are read from the file; bad template rails are refused', async (t) => {
  const raw = JSON.parse(readFileSync(DEFAULT_FIXTURES, 'utf8'));
  raw.timeline.providerReadyMs = 500;
  raw.programmes[0].accountTemplates.PERSON = [{ kind: 'FIAT', currency: 'EUR', country: 'DE', displayName: 'Euro', depositInstructions: [{ name: 'SEPA', rail: 'EU.EUR.SEPA' }] }];
  const dir = mkdtempSync(path.join(tmpdir(), 'templates-'));
  const file = path.join(dir, 'fixtures.json');
  writeFileSync(file, JSON.stringify(raw));
  const sandbox = await buildTestApp({ config: { fixtures: file } });
  t.teardown(sandbox.close);
  const user = await createUser(sandbox, 'PERSON', 'Euro Person');
  const requestId = await startEnrollment(sandbox, user.as);
  const { personEntries } = await import('../../helpers/onboarding.js');
  await writeEntries(sandbox, user.as, requestId, await personEntries('Euro Person'));
  await submit(sandbox, user.as, requestId);
  await advance(sandbox, 5_000);
  const [account] = await accountsWithDetail(sandbox, user);
  t.match(account, { currency: 'EUR', displayName: 'Euro', depositInstructions: [] });
  await advance(sandbox, 500);
  const [ready] = await accountsWithDetail(sandbox, user);
  t.match(ready.depositInstructions, [{ rail: { type: 'EU.EUR.SEPA' }, fields: [{ key: 'accountHolderName', value: 'Euro Person' }, { key: 'iban', value: /^DE\d{20}$/ }] }]);

  const defaults = validateFixtures({ ...raw, programmes: raw.programmes.map(({ accountTemplates: _unused, ...programme }: Record<string, unknown>) => programme) });
  t.same(defaults.programmes[0]!.accountTemplates.PERSON.map((template) => template.currency), ['USD'], 'default PERSON template');
  t.same(defaults.programmes[0]!.accountTemplates.BUSINESS.map((template) => template.currency), ['USD', 'USDC'], 'default BUSINESS templates');

  raw.programmes[0].accountTemplates.PERSON = [{ kind: 'FIAT', currency: 'USD', depositInstructions: [{ name: 'x', rail: 'EU.EUR.SEPA' }] }];
  writeFileSync(file, JSON.stringify(raw));
  await t.rejects(buildTestApp({ config: { fixtures: file } }), /accountTemplates\.PERSON\[0\].*EU\.EUR\.SEPA/, 'a rail of another currency is refused at load');
});
