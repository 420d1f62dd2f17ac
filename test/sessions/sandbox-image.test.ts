import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tap from 'tap';
import { call } from '../helpers/http-client.js';
import { startServer } from '../../src/server.js';
import { openImage } from '../../src/db/connection.js';
import { stateTables } from '../../src/db/migrate.js';
import { sandboxImage } from '../../src/sessions/sessions.registry.js';
import { openSandbox } from '../../src/sandbox.js';

// docs/sessions.md#how-fast: sessions after the first of a start are opened from an image of the first one's
// database, which must be that database as migrated and seeded, without its clock record.
tap.test('a sandbox image is the seeded database without its clock; sandboxes opened from it start their own clock', async (t) => {
  const config = { logLevel: 'silent' as const, clock: '2027-01-15T08:30:00.000Z' };
  const first = await openSandbox({ config });
  t.teardown(() => first.close());
  const image = sandboxImage(first.ctx.db);
  const copy = openImage(image);
  t.teardown(() => copy.close());

  t.same(copy.prepare("SELECT key FROM meta WHERE key LIKE 'clock%'").all(), [], 'no clock record');
  t.same(copy.prepare("SELECT value FROM meta WHERE key = 'id_counter'").get(), first.ctx.db.prepare("SELECT value FROM meta WHERE key = 'id_counter'").get(), 'the id counter is kept');
  t.equal(copy.pragma('foreign_keys', { simple: true }), 1, 'the connection pragmas of openDatabase');
  for (const table of stateTables(first.ctx.db).filter((name) => name !== 'meta')) {
    t.same(copy.prepare(`SELECT * FROM ${table}`).all(), first.ctx.db.prepare(`SELECT * FROM ${table}`).all(), `${table}: every row`);
  }
  t.ok((copy.prepare('SELECT COUNT(*) AS n FROM accounts').get() as { n: number }).n > 0, 'seeded');

  const later = await openSandbox({ config: { ...config, clock: '2028-02-01T00:00:00.000Z' }, image });
  t.teardown(() => later.close());
  t.equal(later.ctx.clock.nowIso(), '2028-02-01T00:00:00.000Z', 'a sandbox from the image starts at its own clock');
  t.same(later.ctx.db.prepare('SELECT * FROM accounts ORDER BY id').all(), first.ctx.db.prepare('SELECT * FROM accounts ORDER BY id').all(), 'and holds the seeded rows');
  // it works as a new one: a write goes through
  later.ctx.db.prepare("INSERT INTO meta (key, value) VALUES ('probe', '1')").run();
  t.equal((later.ctx.db.prepare("SELECT value FROM meta WHERE key = 'probe'").get() as { value: string }).value, '1', 'writable');
});

// docs/configuration.md#snapshot: a server started with --snapshot starts every session from that file, its clock
// included, whether the session is the first of the pool or a later one (no image is taken then).
tap.test('sessions of a server started with --snapshot all start from the snapshot and its clock', async (t) => {
  const source = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: '2027-03-01T09:00:00.000Z' } as never });
  t.teardown(() => source.close());
  await call(`${source.url}/_emulator/clock`, 'POST', { advanceMs: 3_600_000 });
  t.equal((await call(`${source.url}/_emulator/snapshots`, 'POST', { name: 'later' })).status, 201, 'snapshot saved');
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'sandbox-image-')), 'later.sqlite');
  writeFileSync(file, Buffer.from(await (await fetch(`${source.url}/_emulator/snapshots/later/export`)).arrayBuffer()));

  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', snapshot: file } as never });
  t.teardown(() => server.close());
  for (let index = 0; index < 4; index += 1) {
    const created = await call(`${server.url}/_emulator/sessions`, 'POST');
    t.equal(created.status, 201);
    const { baseUrl } = created.body as { baseUrl: string };
    t.equal((await call(`${baseUrl}/_emulator/clock`)).body.now, '2027-03-01T10:00:00.000Z', `session ${index + 1} starts at the snapshot's clock`);
    await new Promise((resolve) => setTimeout(resolve, 150)); // the pool refills between requests
  }
});
