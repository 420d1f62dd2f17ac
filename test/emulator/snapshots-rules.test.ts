import t from 'tap';
import { knownLevels } from '../../src/snapshots/snapshots.check.js';
import { JOB_TYPES, ROW_RULES, rowProblem } from '../../src/snapshots/snapshots.rules.js';
import { jobHandlers } from '../../src/modules.js';

// The row rules of snapshot files (src/snapshots/snapshots.rules.ts, docs/robustness.md#hostile-files): one per column of
// every state table of this build, so a migration that adds a table or a column fails here until it adds its rules.

t.test('every state table and every column of this build has a rule, and no rule names anything else', async (t) => {
  const latest = knownLevels().at(-1)!;
  for (const table of latest.tables) {
    t.ok(ROW_RULES[table.name], `table ${table.name} has rules`);
    t.same(Object.keys(ROW_RULES[table.name] ?? {}).sort(), [...table.columns].sort(), `table ${table.name}: one rule per column`);
  }
  t.same(Object.keys(ROW_RULES).sort(), latest.tables.map((table) => table.name).sort(), 'no rules for tables this build does not have');
});

t.test('the levels: one per migration, each with its tables', async (t) => {
  const levels = knownLevels();
  t.same(levels.map((level) => level.version), levels.map((_, index) => index + 1));
  t.ok(levels.every((level) => level.entries.has('table snapshot_info')));
});

t.test('a rule names the column and what is wrong', async (t) => {
  t.equal(rowProblem('jobs', ['id', 'status'], [1, 'BOGUS'], 0), 'column status is "BOGUS", not one of PENDING, DONE, FAILED, CANCELED');
  t.equal(rowProblem('nowhere', ['a'], [1], 0), 'this build has no rules for table nowhere');
});

t.test('the job types a file may hold are exactly those the app has a handler for', async (t) => {
  t.same([...JOB_TYPES].sort(), Object.keys(jobHandlers).sort());
});

t.test('a meta row is checked by its key: the id counter, the clock record', async (t) => {
  const meta = (key: string, value: unknown) => rowProblem('meta', ['key', 'value'], [key, value], 0);
  t.equal(meta('id_counter', '42'), null);
  t.equal(meta('id_counter', '4.2'), 'column value (key id_counter) is "4.2", not an integer written as text');
  t.equal(meta('clock_state', '{"mode":"realtime","offsetMs":-5}'), null);
  t.match(meta('clock_state', '{"mode":"frozen","frozenAtMs":1e30}'), /^column value \(key clock_state\) holds JSON that does not match its schema \(frozenAtMs: /);
  t.equal(meta('clock_high_water_ms', '1772366400000'), null);
  t.match(meta('other', 'x'), /^column key is "other", not one of /);
});
