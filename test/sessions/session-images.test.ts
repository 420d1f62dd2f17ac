import tap from 'tap';
import { startServer, type RunningServer } from '../../src/server.js';
import { openImage } from '../../src/db/connection.js';
import { stateTables } from '../../src/db/migrate.js';
import { compactImage, IMAGE_PAGE_SIZE } from '../../src/db/compact-image.js';
import { call, signed } from '../helpers/http-client.js';
import { START } from '../helper.js';
import type { Db } from '../../src/db/connection.js';

// docs/sessions.md#how-fast: sessions open images (1 KiB pages), and a session from a snapshot opens the image the
// first session from that very snapshot left, never one of a snapshot since replaced or deleted.

async function serve(clock = START): Promise<RunningServer> {
  return startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock } as never });
}

async function created(server: RunningServer, body?: unknown): Promise<{ id: string; baseUrl: string }> {
  const answer = await call(`${server.url}/_emulator/sessions`, 'POST', body);
  if (answer.status !== 201) throw new Error(`session not created: ${answer.status} ${answer.text}`);
  return answer.body as { id: string; baseUrl: string };
}

const deposit = (baseUrl: string, amount: string) =>
  signed(baseUrl, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount });

/** The status of the deposit of `amount` in that sandbox (deposits answer no id), or undefined when there is none. */
async function depositStatus(baseUrl: string, amount: string): Promise<string | undefined> {
  const list = await signed(baseUrl, 'GET', '/v1/transactions?pageSize=100');
  return (list.body.data as Array<{ creditAmount: string; status: string }>).find((transaction) => transaction.creditAmount === amount)?.status;
}

const dbOf = (server: RunningServer, id: string): Db => server.sessions.get(id)!.sandbox.ctx.db;

function rowsOf(db: Db, table: string): unknown[] {
  const withoutRowid = /WITHOUT\s+ROWID/i.test((db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(table) as { sql: string }).sql);
  return db.prepare(`SELECT ${withoutRowid ? '' : 'rowid AS _rowid, '}* FROM "${table}" ORDER BY 1`).all();
}

tap.test('a compact image holds the same schema, rows, rowids, sequences and user_version in 1 KiB pages', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  const source = server.ctx.db;
  // a row whose rowid is not a column, and a gap in an AUTOINCREMENT sequence, both kept as they are
  source.prepare("INSERT INTO meta (key, value) VALUES ('probe', 'x')").run();
  source.prepare("DELETE FROM meta WHERE key = 'probe'").run();
  source.prepare("INSERT INTO meta (key, value) VALUES ('probe-2', 'y')").run();
  const copy = openImage(compactImage(source));
  t.teardown(() => copy.close());

  t.equal(copy.pragma('page_size', { simple: true }), IMAGE_PAGE_SIZE);
  t.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
  t.equal(copy.pragma('user_version', { simple: true }), source.pragma('user_version', { simple: true }));
  const schema = (db: Db) => db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name").all();
  t.same(schema(copy), schema(source), 'every table, index and trigger');
  for (const table of [...stateTables(source), 'sqlite_sequence']) t.same(rowsOf(copy, table), rowsOf(source, table), `${table}: every row and rowid`);
  // the triggers were created after the rows: the counters they keep were copied, not counted twice
  t.same(copy.prepare('SELECT * FROM transaction_time_counts ORDER BY 1, 2').all(), source.prepare('SELECT * FROM transaction_time_counts ORDER BY 1, 2').all());
});

tap.test('sessions from one snapshot: the first fills the image, later ones open it and start exactly as the first did', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  t.equal((await deposit(server.url, '7.00')).status, 202);
  await call(`${server.url}/_emulator/clock`, 'POST', { advanceMs: 3_600_000 });
  t.equal((await call(`${server.url}/_emulator/snapshots`, 'POST', { name: 'base' })).status, 201);
  await call(`${server.url}/_emulator/clock`, 'POST', { advanceMs: 3_600_000 }); // the root moves on; the snapshot does not

  const first = await created(server, { snapshot: 'base' });
  const second = await created(server, { snapshot: 'base' });
  for (const table of stateTables(dbOf(server, first.id))) {
    t.same(rowsOf(dbOf(server, second.id), table), rowsOf(dbOf(server, first.id), table), `${table}: the same rows (meta and its clock record included)`);
  }
  for (const session of [first, second]) {
    t.equal((await call(`${session.baseUrl}/_emulator/clock`)).body.now, '2026-03-01T13:00:00.000Z', 'the snapshot\'s clock');
    t.equal(await depositStatus(session.baseUrl, '7.00'), 'COMPLETED', 'the snapshot\'s data');
  }

  // isolated: a write in one is in neither the other nor a third opened from the same image
  t.equal((await deposit(first.baseUrl, '9.00')).status, 202);
  t.equal(await depositStatus(first.baseUrl, '9.00'), 'PENDING');
  const third = await created(server, { snapshot: 'base' });
  for (const session of [second, third]) t.equal(await depositStatus(session.baseUrl, '9.00'), undefined, 'not in the others');

  // reset goes back to the snapshot, for a session opened from the image too
  await deposit(second.baseUrl, '3.00');
  await call(`${second.baseUrl}/_emulator/clock`, 'POST', { advanceMs: 60_000 });
  t.equal((await call(`${second.baseUrl}/_emulator/reset`, 'POST')).status, 200);
  for (const table of stateTables(dbOf(server, third.id)).filter((name) => name !== 'meta')) {
    t.same(rowsOf(dbOf(server, second.id), table), rowsOf(dbOf(server, third.id), table), `${table}: back to the snapshot after reset`);
  }
  t.equal((await call(`${second.baseUrl}/_emulator/clock`)).body.now, '2026-03-01T13:00:00.000Z', 'and its clock');
});

tap.test('a snapshot saved again or deleted: later sessions never open the old image', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  t.equal((await call(`${server.url}/_emulator/snapshots`, 'POST', { name: 'base' })).status, 201);
  const before = await created(server, { snapshot: 'base' });
  t.equal((await deposit(server.url, '5.00')).status, 202);
  t.equal((await call(`${server.url}/_emulator/snapshots`, 'POST', { name: 'base' })).status, 200, 'saved again under the same name');

  const after = await created(server, { snapshot: 'base' });
  t.equal(await depositStatus(after.baseUrl, '5.00'), 'PENDING', 'the new snapshot\'s data');
  t.equal(await depositStatus(before.baseUrl, '5.00'), undefined, 'the earlier session keeps what it started from');
  const again = await created(server, { snapshot: 'base' });
  t.equal(await depositStatus(again.baseUrl, '5.00'), 'PENDING', 'and so does the next one, from the new image');

  t.equal((await call(`${server.url}/_emulator/snapshots/base`, 'DELETE')).status, 204);
  t.equal((await call(`${server.url}/_emulator/sessions`, 'POST', { snapshot: 'base' })).status, 404, 'a deleted snapshot starts no session');
});

tap.test('a session opened from a snapshot image runs no due job before its clock is at the snapshot', async (t) => {
  // the snapshot is taken at START with a deposit settling a second later; the second server starts a day later, so
  // a session of it opens at that day before its clock is set back to the snapshot's instant
  const source = await serve();
  t.teardown(() => source.close());
  t.equal((await deposit(source.url, '4.00')).status, 202);
  t.equal((await call(`${source.url}/_emulator/snapshots`, 'POST', { name: 'pending' })).status, 201);
  const file = Buffer.from(await (await fetch(`${source.url}/_emulator/snapshots/pending/export`)).arrayBuffer());

  const server = await serve(new Date(Date.parse(START) + 86_400_000).toISOString());
  t.teardown(() => server.close());
  const uploaded = await fetch(`${server.url}/_emulator/snapshots/pending`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: file });
  t.equal(uploaded.status, 201);
  for (const which of ['first (the full restore)', 'second (the image)']) {
    const session = await created(server, { snapshot: 'pending' });
    t.equal((await call(`${session.baseUrl}/_emulator/clock`)).body.now, START, `${which}: the snapshot's clock`);
    t.equal(await depositStatus(session.baseUrl, '4.00'), 'PENDING', `${which}: its deposit not settled`);
  }
});
