import t from 'tap';
import Database from 'better-sqlite3';
import { sqlFilter, whereClause } from '../../src/db/filter.js';

// The one WHERE builder of the lists (src/db/filter.ts): a term is kept only when its value is given, in the order
// listed, and the text is the same bytes the lists wrote by hand before (their prepared statements and plans).

t.test('terms whose value is undefined are left out; the rest keep their order and values', async (t) => {
  const filter = sqlFilter([
    ['scope = ?', 'user:usr_1'],
    ['type = ?', undefined],
    ['status = ?', 'PENDING'],
    ['created_at_ms >= ?', 0],
  ]);
  t.same(filter, { sql: 'scope = ? AND status = ? AND created_at_ms >= ?', params: ['user:usr_1', 'PENDING', 0] }, '0 is a value, kept');
  t.equal(whereClause(filter), 'WHERE scope = ? AND status = ? AND created_at_ms >= ?');
});

t.test('no term kept: no WHERE at all', async (t) => {
  const filter = sqlFilter([['status = ?', undefined]]);
  t.same(filter, { sql: '', params: [] });
  t.equal(whereClause(filter), '');
});

t.test('the text and values run as one statement', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec("CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT, type TEXT); INSERT INTO jobs (status, type) VALUES ('DONE', 'a'), ('FAILED', 'a'), ('FAILED', 'b')");
  const count = (status?: string, type?: string) => {
    const filter = sqlFilter([
      ['status = ?', status],
      ['type = ?', type],
    ]);
    return (db.prepare(`SELECT COUNT(*) AS n FROM jobs ${whereClause(filter)}`).get(...filter.params) as { n: number }).n;
  };
  t.equal(count(), 3);
  t.equal(count('FAILED'), 2);
  t.equal(count('FAILED', 'b'), 1);
  t.equal(count(undefined, 'a'), 2);
});
