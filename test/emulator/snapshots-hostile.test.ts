import Database from 'better-sqlite3';
import http from 'node:http';
import t from 'tap';
import { startServer, type RunningServer } from '../../src/server.js';
import { checkInWorker, checkInWorkerSync, knownLevels, ROWS_PER_PIECE, SnapshotRefusal } from '../../src/snapshots/snapshots.check.js';
import { fileTableName } from '../../src/db/snapshot-tables.js';
import { call, signed } from '../helpers/http-client.js';
import { START } from '../helper.js';

// Hostile snapshot files (docs/robustness.md#hostile-files): every file below is made in the test from a real export,
// changed with SQLite, and uploaded over real HTTP to the root or to a session. Each is refused with a 400 naming what
// is wrong, nothing of it is stored, and the sandboxes go on answering.

interface Answer {
  status: number;
  body: any;
}

async function upload(baseUrl: string, name: string, bytes: Buffer): Promise<Answer> {
  const response = await fetch(`${baseUrl}/_emulator/snapshots/${name}`, { method: 'PUT', body: new Uint8Array(bytes), headers: { 'content-type': 'application/octet-stream' } });
  return { status: response.status, body: await response.json() };
}

async function exported(baseUrl: string, name: string): Promise<Buffer> {
  t.equal((await call(`${baseUrl}/_emulator/snapshots`, 'POST', { name })).status, 201);
  return Buffer.from(await (await fetch(`${baseUrl}/_emulator/snapshots/${name}/export`)).arrayBuffer());
}

/** The exported file changed by `edit` (run on a writable copy of it). */
function edited(good: Buffer, edit: (db: Database.Database) => void): Buffer {
  const db = new Database(good);
  edit(db);
  const bytes = db.serialize();
  db.close();
  return bytes;
}

/** A view that never ends when read: a recursive query with no bound. */
const ENDLESS = 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)';

let server: RunningServer;
let good: Buffer;
let someTransaction: string;

t.before(async () => {
  server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as never });
  // a deposit in flight, so the file holds jobs, outbox rows and in-flight sums as well as the fixtures' history
  const deposit = await signed(server.url, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '12.00', reference: 'hostile' });
  t.equal(deposit.status, 202, deposit.text);
  someTransaction = /Deposit (txn_[a-z0-9]+)/.exec(deposit.body.message)![1]!;
  good = await exported(server.url, 'good');
});
t.teardown(() => server.close());

t.test('a view over an endless query in place of a table: 400 at once, from a session too, and everyone goes on answering', async (t) => {
  const session = (await call(`${server.url}/_emulator/sessions`, 'POST', {})).body;
  const endlessSequence = edited(good, (db) => db.exec(`DROP TABLE snapshot_sequence; CREATE VIEW snapshot_sequence (name, seq) AS ${ENDLESS} SELECT 'jobs', n FROM r`));
  // transaction_counts is a WITHOUT ROWID table in the sandbox's schema
  const endlessCounts = edited(good, (db) =>
    db.exec(`DROP TABLE transaction_counts; CREATE VIEW transaction_counts (scope, type, status, n) AS ${ENDLESS} SELECT 'user:usr_acme', 'DEPOSIT', 'PENDING', n FROM r`),
  );
  for (const [label, file, view] of [
    ['snapshot_sequence', endlessSequence, 'snapshot_sequence'],
    ['a WITHOUT ROWID table', endlessCounts, 'transaction_counts'],
  ] as const) {
    const inSession = upload(session.baseUrl, 'evil', file);
    const fromRoot = call(`${server.url}/_emulator/clock`);
    const [refused, root] = await Promise.all([inSession, fromRoot]);
    t.equal(refused.status, 400, label);
    t.match(refused.body, { message: `Not a snapshot this server can restore: it holds a view (${view}); a snapshot file holds only tables` }, label);
    t.match(refused.body.validationErrors, [{ type: 'InvalidValue', fieldRef: 'body' }], label);
    t.equal(root.status, 200, `${label}: the root answers`);
  }
  t.equal((await call(`${session.baseUrl}/_emulator/clock`)).status, 200, 'the session answers');
  t.same((await call(`${session.baseUrl}/_emulator/snapshots`)).body.data, [], 'nothing stored in the session');
});

t.test('every other kind of hostile or broken file: 400 naming the first offending table and row; nothing stored, the state kept', async (t) => {
  const before = await signed(server.url, 'GET', `/v1/transactions/${someTransaction}`);
  t.equal(before.status, 200);
  const firstTransaction = (db: Database.Database) => (db.prepare('SELECT rowid AS rowid, id FROM transactions ORDER BY rowid LIMIT 1').get() as { rowid: number; id: string });
  const probe = new Database(good, { readonly: true });
  const first = firstTransaction(probe);
  probe.close();
  const named = `table transactions, row id "${first.id}" (rowid ${first.rowid})`;
  const latest = knownLevels().at(-1)!.version;

  const cases: Array<[string, Buffer, string | RegExp]> = [
    ['a view over an ordinary state table', edited(good, (db) => db.exec('ALTER TABLE users RENAME TO users_rows; CREATE VIEW users AS SELECT * FROM users_rows')), /it holds a view \(users\)/],
    ['a foreign trigger', edited(good, (db) => db.exec("CREATE TRIGGER sneaky AFTER INSERT ON users BEGIN UPDATE programmes SET webhook_url = 'http://evil.example'; END")), /it holds a trigger \(sneaky on users\)/],
    ['an extra table', edited(good, (db) => db.exec('CREATE TABLE extra (a)')), /it holds table extra, which no exported file of schema version \d+ has/],
    ['an extra index', edited(good, (db) => db.exec('CREATE INDEX users_by_name ON users (name)')), /it holds index users_by_name/],
    ['a missing table', edited(good, (db) => db.exec('DROP TABLE beneficiaries')), /table beneficiaries is missing/],
    ['a status no machine has', edited(good, (db) => db.prepare("UPDATE transactions SET status = 'BOGUS' WHERE rowid = ?").run(first.rowid)), `${named}: column status is "BOGUS", not one of PENDING, PROCESSING, COMPLETED, FAILED`],
    ['an amount that is not an integer', edited(good, (db) => db.prepare("UPDATE transactions SET debit_amount_minor = 'abc' WHERE rowid = ?").run(first.rowid)), `${named}: column debit_amount_minor is "abc", not an integer`],
    ['a fractional amount', edited(good, (db) => db.prepare('UPDATE transactions SET credit_amount_minor = 1.5 WHERE rowid = ?').run(first.rowid)), `${named}: column credit_amount_minor is 1.5, not an integer`],
    ['stored JSON that is not JSON', edited(good, (db) => db.prepare("UPDATE transactions SET rest_json = '{not json' WHERE rowid = ?").run(first.rowid)), `${named}: column rest_json is "{not json", not JSON`],
    ['stored JSON that does not match its schema', edited(good, (db) => db.prepare(`UPDATE transactions SET rest_json = '{"id":1}' WHERE rowid = ?`).run(first.rowid)), /column rest_json holds JSON that does not match its schema \(id: /],
    ['an instant that is not one', edited(good, (db) => db.exec("UPDATE users SET created_at = 'yesterday' WHERE rowid = (SELECT MIN(rowid) FROM users)")), /table users, row id "usr_[a-z0-9_]+" \(rowid \d+\): column created_at is "yesterday", not an instant/],
    ['a truncated file', good.subarray(0, Math.floor(good.length / 2)), /not a (readable )?SQLite database file|integrity check fails/],
    ['a future schema', edited(good, (db) => db.pragma(`user_version = ${latest + 1}`)), `its schema is version ${latest + 1}, later than this server's ${latest}`],
    ['bytes that are not SQLite', Buffer.from('SQLite format 2\0 but not really '.repeat(200)), /not a (readable )?SQLite database file/],
  ];
  for (const [label, bytes, message] of cases) {
    const answer = await upload(server.url, 'bad', bytes);
    t.equal(answer.status, 400, label);
    t.match(answer.body.message, typeof message === 'string' ? `Not a snapshot this server can restore: ${message}` : message, label);
    t.match(answer.body.validationErrors, [{ type: 'InvalidValue', fieldRef: 'body' }], label);
  }
  t.same(
    (await call(`${server.url}/_emulator/snapshots`)).body.data.map((item: { name: string }) => item.name),
    ['good'],
    'no refused file is stored',
  );
  t.same(await signed(server.url, 'GET', `/v1/transactions/${someTransaction}`).then((answer) => answer.body), before.body, 'the state is as it was');
});

// docs/robustness.md#hostile-files: the rows together must fit the real schema, and meta, job types and webhook URLs
// hold only what the API writes; each of these was stored (201) and then answered 500 on restore or on a later request
t.test('rows that break the real schema (a duplicate, a dangling reference) or hold what no call writes: 400 naming the row; restore and sessions never see them', async (t) => {
  const probe = new Database(good, { readonly: true });
  const firstUser = probe.prepare('SELECT rowid AS rowid, id FROM users ORDER BY rowid LIMIT 1').get() as { rowid: number; id: string };
  const lastUser = (probe.prepare('SELECT MAX(rowid) AS n FROM users').get() as { n: number }).n;
  const metaRow = (key: string) => (probe.prepare('SELECT rowid AS rowid FROM meta WHERE key = ?').get(key) as { rowid: number }).rowid;
  const firstJob = (probe.prepare('SELECT MIN(rowid) AS n FROM jobs').get() as { n: number }).n;
  const firstProgramme = probe.prepare('SELECT rowid AS rowid, id FROM programmes ORDER BY rowid LIMIT 1').get() as { rowid: number; id: string };
  const transactionOfUser = probe.prepare("SELECT rowid AS rowid, id FROM transactions WHERE user_id = 'usr_acme' ORDER BY rowid LIMIT 1").get() as { rowid: number; id: string };
  const counter = `table meta, row key "id_counter" (rowid ${metaRow('id_counter')}): column value (key id_counter)`;
  probe.close();

  const cases: Array<[string, Buffer, string | RegExp]> = [
    [
      'a user twice',
      edited(good, (db) => db.prepare('INSERT INTO users SELECT * FROM users WHERE rowid = ?').run(firstUser.rowid)),
      new RegExp(`^table users, row id "${firstUser.id}" \\(rowid ${lastUser + 1}\\): this build's schema refuses it \\(UNIQUE constraint failed: users\\.`),
    ],
    [
      'a user its transactions name deleted',
      edited(good, (db) => db.exec("DELETE FROM users WHERE id = 'usr_acme'")),
      `table transactions, row id "${transactionOfUser.id}" (rowid ${transactionOfUser.rowid}): column user_id "usr_acme" refers to a row of users that is not there`,
    ],
    [
      'a list counter twice',
      edited(good, (db) => db.exec('INSERT INTO transaction_counts SELECT * FROM transaction_counts LIMIT 1')),
      /^table transaction_counts, row scope "[^"]+", type "\w+", status "\w+": its key is held by another row too$/,
    ],
    ['an id counter that is not a number', edited(good, (db) => db.exec("UPDATE meta SET value = 'abc' WHERE key = 'id_counter'")), `${counter} is "abc", not an integer written as text`],
    ['a negative id counter', edited(good, (db) => db.exec("UPDATE meta SET value = '-5' WHERE key = 'id_counter'")), `${counter} is -5, outside 0..9007199254740991`],
    ['an id counter past 2^53', edited(good, (db) => db.exec("UPDATE meta SET value = '99999999999999999999999' WHERE key = 'id_counter'")), `${counter} is "99999999999999999999999", not an integer written as text`],
    ['no id counter', edited(good, (db) => db.exec("DELETE FROM meta WHERE key = 'id_counter'")), 'table meta has no id_counter row, yet ids were drawn (table outbox has rows); a restore would hand the same ids out again'],
    [
      'a clock record past the year 9999',
      edited(good, (db) => db.exec(`UPDATE meta SET value = '{"mode":"frozen","frozenAtMs":1e30}' WHERE key = 'clock_state'`)),
      /^table meta, row key "clock_state" \(rowid \d+\): column value \(key clock_state\) holds JSON that does not match its schema \(frozenAtMs: /,
    ],
    [
      'a clock record 50,000 arrays deep',
      edited(good, (db) => db.prepare("UPDATE meta SET value = ? WHERE key = 'clock_state'").run('['.repeat(50_000) + ']'.repeat(50_000))),
      /^table meta, row key "clock_state" \(rowid \d+\): column value \(key clock_state\) holds JSON that does not match its schema/,
    ],
    ['a meta row no build writes', edited(good, (db) => db.exec("INSERT INTO meta (key, value) VALUES ('evil', 'x')")), /^table meta, row key "evil" \(rowid \d+\): column key is "evil", not one of id_counter, /],
    ['a second snapshot_info row', edited(good, (db) => db.exec("INSERT INTO snapshot_info VALUES ('clock_ms2', '1')")), 'its snapshot_info holds a row "clock_ms2"; an export writes only format, name, schema_version, clock_ms, clock_mode, saved_at'],
    ['a job no handler knows', edited(good, (db) => db.prepare("UPDATE jobs SET type = 'evil.job' WHERE rowid = ?").run(firstJob)), new RegExp(`^table jobs, row rowid ${firstJob}: column type is "evil\\.job", not one of transaction\\.rail-step, `)],
    [
      'a webhook URL that is not http(s)',
      edited(good, (db) => db.prepare("UPDATE programmes SET webhook_url = 'file:///etc/passwd' WHERE rowid = ?").run(firstProgramme.rowid)),
      `table programmes, row id "${firstProgramme.id}" (rowid ${firstProgramme.rowid}): column webhook_url is "file:///etc/passwd": url must be an http:// or https:// URL`,
    ],
  ];
  const prefix = 'Not a snapshot this server can restore: ';
  for (const [label, bytes, message] of cases) {
    const answer = await upload(server.url, 'broken', bytes);
    t.equal(answer.status, 400, label);
    t.equal(answer.body.message.slice(0, prefix.length), prefix, label);
    if (typeof message === 'string') t.equal(answer.body.message.slice(prefix.length), message, label);
    else t.match(answer.body.message.slice(prefix.length), message, label);
    t.match(answer.body.validationErrors, [{ type: 'InvalidValue', fieldRef: 'body' }], label);
  }
  t.equal((await call(`${server.url}/_emulator/snapshots/broken/restore`, 'POST')).status, 404, 'nothing stored to restore');
  t.equal((await call(`${server.url}/_emulator/sessions`, 'POST', { snapshot: 'broken' })).status, 404, 'nor to open a session from');
});

t.test('a file of an older schema level is accepted, migrated, and restores', async (t) => {
  const levels = knownLevels();
  const latest = levels.at(-1)!;
  const older = levels.at(-2)!;
  // what the build of the level before would have exported: its tables, with its columns
  const file = edited(good, (db) => {
    for (const table of latest.tables) {
      const then = older.tables.find((candidate) => candidate.name === table.name);
      if (!then) db.exec(`DROP TABLE "${fileTableName(table.name)}"`);
      else for (const column of table.columns.filter((name) => !then.columns.includes(name))) db.exec(`ALTER TABLE "${fileTableName(table.name)}" DROP COLUMN "${column}"`);
    }
    // and the tables a later migration dropped (migration 013: the split hourly counters), as that build wrote them
    for (const table of older.tables.filter((then) => !latest.tables.some((now) => now.name === then.name))) {
      db.exec(`CREATE TABLE "${fileTableName(table.name)}" (${table.columns.map((column) => `"${column}"`).join(', ')})`);
    }
    db.prepare("UPDATE snapshot_info SET value = ? WHERE key = 'schema_version'").run(String(older.version));
    db.pragma(`user_version = ${older.version}`);
  });
  t.not(file.equals(good), true, 'the file differs from a current one');
  const uploaded = await upload(server.url, 'older', file);
  t.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
  t.equal(uploaded.body.schemaVersion, latest.version, 'migrated to this build');
  const expected = await signed(server.url, 'GET', `/v1/transactions/${someTransaction}`);
  const account = await signed(server.url, 'GET', '/v1/accounts/acct_acme_usd');
  t.equal((await call(`${server.url}/_emulator/reset`, 'POST', {})).status, 200);
  t.equal((await call(`${server.url}/_emulator/snapshots/older/restore`, 'POST')).status, 200);
  t.same((await signed(server.url, 'GET', `/v1/transactions/${someTransaction}`)).body, expected.body, 'the deposit is back');
  t.same((await signed(server.url, 'GET', '/v1/accounts/acct_acme_usd')).body, account.body, 'with its balances (the in-flight sums rebuilt by the migration)');
});

t.test('the check runs off the main thread: a sandbox answers while a check is under way, and a check past its bound is refused', async (t) => {
  // a moderate file: a few thousand transactions more than the fixtures
  const moderate = edited(good, (db) => {
    const row = db.prepare('SELECT rowid AS r, * FROM transactions WHERE id = ?').get(someTransaction) as Record<string, unknown>;
    const columns = Object.keys(row).filter((column) => column !== 'r');
    const insert = db.prepare(`INSERT INTO transactions (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    db.transaction(() => {
      for (let i = 0; i < 3000; i += 1) insert.run(columns.map((column) => (column === 'id' ? `txn_copy${i}` : row[column])));
    })();
  });
  const hold = new Int32Array(new SharedArrayBuffer(4));
  const checking = checkInWorker(moderate, { hold });
  for (let i = 0; i < 5; i += 1) t.equal((await call(`${server.url}/_emulator/clock`)).status, 200, `answer ${i + 1} while the check is under way`);
  Atomics.store(hold, 0, 1);
  Atomics.notify(hold, 0);
  const [checked, meanwhile] = await Promise.all([checking, call(`${server.url}/_emulator/clock`)]);
  t.equal(meanwhile.status, 200);
  t.equal(checked.tables.find((table) => table.name === 'transactions')!.rows.length > 3000, true, 'the moderate file passes');
  // its rows came back in pieces of ROWS_PER_PIECE (docs/robustness.md#hostile-files): the same file, rows and order,
  // as the one-message answer of the start-up check
  t.ok(checked.tables.some((table) => table.rows.length > ROWS_PER_PIECE), 'a table longer than one piece');
  t.same(checked, checkInWorkerSync(moderate), 'reassembled exactly as the whole answer');

  // held for ever: the bound refuses it and ends the worker
  const stuck = new Int32Array(new SharedArrayBuffer(4));
  await t.rejects(checkInWorker(good, { hold: stuck, limitMs: 50 }), new SnapshotRefusal('checking it took longer than 0.05 s, the bound on one file (docs/robustness.md#hostile-files)'));

  const [uploaded, root] = await Promise.all([upload(server.url, 'moderate', moderate), call(`${server.url}/_emulator/clock`)]);
  t.equal(uploaded.status, 201, 'uploaded over HTTP');
  t.equal(root.status, 200);
});

/** A raw upload: the file in chunks of 64 KiB, with `headers` as given (no Content-Length: chunked). */
function rawUpload(baseUrl: string, name: string, bytes: Buffer, headers: Record<string, string | number>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}/_emulator/snapshots/${name}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    request.on('error', reject);
    for (let at = 0; at < bytes.length; at += 65_536) request.write(bytes.subarray(at, at + 65_536));
    request.end();
  });
}

t.test('an upload arrives into shared memory as it comes (Content-Length), or joined at its end (chunked); over the limit is 413 before any byte', async (t) => {
  const sized = await rawUpload(server.url, 'sized', good, { 'content-length': good.length });
  t.equal(sized.status, 201, 'with a Content-Length');
  const chunked = await rawUpload(server.url, 'chunked', good, { 'transfer-encoding': 'chunked' });
  t.equal(chunked.status, 201, 'chunked');
  t.same({ ...chunked.body, name: 'sized', savedAt: sized.body.savedAt, clock: sized.body.clock }, sized.body, 'the same file either way');
  const restored = await call(`${server.url}/_emulator/snapshots/chunked/restore`, 'POST');
  t.equal(restored.status, 200, 'and it restores');

  // a declared size over 512 MiB: refused at once, whatever follows
  const tooLarge = await new Promise<Answer>((resolve, reject) => {
    const request = http.request(`${server.url}/_emulator/snapshots/huge`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': 600 * 1024 * 1024 } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    request.on('error', reject);
    request.write(good.subarray(0, 1024));
  });
  t.equal(tooLarge.status, 413, 'over the limit');
  t.match(tooLarge.body.message, /larger than this endpoint accepts/);
  t.equal((await call(`${server.url}/_emulator/snapshots/huge`)).status, 404, 'nothing stored');
  t.equal((await call(`${server.url}/_emulator/clock`)).status, 200, 'and the server answers');
});
