import t from 'tap';
import { AS_JANE, AS_OTHER, buildTestApp, json } from '../../helper.js';
import { listAccounts } from '../../../src/domains/accounts/accounts.service.js';

t.test('accounts list and detail', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const list = await sandbox.request('GET', '/v1/accounts');
  t.equal(list.statusCode, 200);
  const body = json(list);
  t.same(
    body.data.map((a: { id: string }) => a.id),
    ['acct_acme_usd', 'acct_acme_eur', 'acct_acme_usdc', 'acct_acme_gbp'],
    'createdAt ascending, sub-balances hidden',
  );
  t.equal(body.totalRecords, 4);
  t.equal(body.pageSize, 25);

  const page = json(await sandbox.request('GET', '/v1/accounts?pageIndex=1&pageSize=3'));
  t.same(page.data.map((a: { id: string }) => a.id), ['acct_acme_gbp']);

  for (const bad of ['pageSize=0', 'pageSize=101', 'pageIndex=-1', 'pageSize=abc', 'pageSize=0x10', 'pageSize=1e1', 'pageIndex=%2B1', 'pageSize=%205', 'pageSize=', 'pageSize=1.5']) {
    const response = await sandbox.request('GET', `/v1/accounts?${bad}`);
    t.equal(response.statusCode, 400, bad);
    t.notOk('errorCode' in json(response), 'no errorCode: validationErrors describe it (interface 7.1)');
    t.ok(json(response).validationErrors[0].fieldRef, 'names the parameter');
  }

  const detail = json(await sandbox.request('GET', '/v1/accounts/acct_acme_usd'));
  t.equal(detail.depositInstructions.length, 2);
  t.match(detail.balances, { current: /^\d+\.\d{2}$/, available: /^\d+\.\d{2}$/ });

  const otherUser = await sandbox.request('GET', '/v1/accounts/acct_acme_usd', undefined, AS_JANE);
  t.equal(otherUser.statusCode, 403);
  t.equal(json(otherUser).errorCode, 'FORBIDDEN');

  const otherProgramme = await sandbox.request('GET', '/v1/accounts/acct_acme_usd', undefined, AS_OTHER);
  t.equal(otherProgramme.statusCode, 404);
  t.equal(json(otherProgramme).errorCode, 'NOT_FOUND');

  const unknown = await sandbox.request('GET', '/v1/accounts/acct_nope');
  t.equal(unknown.statusCode, 404);
});

// docs/architecture.md#the-read-cache: a page of the list is kept while the database is unchanged, and any write
// (here a row changed behind the API's back, as a job or the control plane would) is seen by the next request.
t.test('the accounts list is answered from the read cache until the database changes', async (t) => {
  for (const readCache of ['on', 'off'] as const) {
    const sandbox = await buildTestApp({ config: { readCache } });
    t.teardown(sandbox.close);
    // the service itself: the same page object from the cache, a new one each time without it
    const caller = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
    const page = { pageIndex: 0, pageSize: 25 };
    t.equal(listAccounts(sandbox.ctx, caller, page) === listAccounts(sandbox.ctx, caller, page), readCache === 'on', `${readCache}: served from the cache`);
    const first = await sandbox.request('GET', '/v1/accounts');
    const again = await sandbox.request('GET', '/v1/accounts');
    t.equal(again.body, first.body, `${readCache}: the same answer while nothing changed`);
    t.equal(json(await sandbox.request('GET', '/v1/accounts?pageSize=2')).data.length, 2, `${readCache}: another page size is its own entry`);
    sandbox.ctx.db.prepare("UPDATE accounts SET display_name = 'Renamed' WHERE id = 'acct_acme_eur'").run();
    const after = json(await sandbox.request('GET', '/v1/accounts'));
    t.equal(after.data.find((a: { id: string }) => a.id === 'acct_acme_eur').displayName, 'Renamed', `${readCache}: a write is seen at once`);
    t.equal(json(await sandbox.request('GET', '/v1/accounts', undefined, AS_JANE)).data.some((a: { id: string }) => a.id === 'acct_acme_eur'), false, `${readCache}: each user has their own pages`);
  }
});
