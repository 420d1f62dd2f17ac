import tap from 'tap';
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
