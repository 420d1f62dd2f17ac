import t from 'tap';
import { buildTestApp } from './helper.js';
t.test('perf', async (t) => {
  const s = await buildTestApp();
  t.teardown(s.close);
  const db = s.ctx.db;
  const row = db.prepare("SELECT * FROM transactions LIMIT 1").get() as Record<string, unknown>;
  const cols = Object.keys(row);
  const ins = db.prepare(`INSERT INTO transactions (${cols.join(',')}) VALUES (${cols.map(() => '?').join(',')})`);
  db.transaction(() => {
    for (let i = 0; i < 300000; i++) {
      const r = { ...row, id: `txn_perf_${i}`, created_at_ms: 1770000000000 + i, updated_at_ms: 1770000000000 + i };
      ins.run(...cols.map((c) => (r as any)[c]));
    }
  })();
  for (const url of ['/_emulator/ui/state', '/_emulator/transactions?userId=usr_jane', '/_emulator/overview']) {
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) await s.app.inject({ method: 'GET', url });
    console.log(url, ((performance.now() - t0) / 5).toFixed(1), 'ms');
  }
  console.log(db.prepare("EXPLAIN QUERY PLAN SELECT * FROM transactions ORDER BY created_at_ms DESC, id DESC LIMIT 50").all());
  t.pass();
});
