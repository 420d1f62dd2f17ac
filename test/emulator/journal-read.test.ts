import t from 'tap';
import { buildTestApp, json } from '../helper.js';
import { JOURNAL_READERS_WAITING } from '../../src/emulator/journal.service.js';

// docs/test-kit.md#request-journal: a read builds its answer 10 entries a turn, and a sandbox's journal is read by one
// request at a time while 16 more wait their turn (one more: 429 with Retry-After), so reads of a full journal neither
// hold every sandbox for seconds nor stack up in memory, and a reader beside the dashboard's is not refused.

t.test('reads of one journal at once are answered one after the other, the same entries each; past 16 waiting, a 429', async (t) => {
  const sandbox = await buildTestApp({ config: { journalSize: 2000 } });
  t.teardown(sandbox.close);
  for (let index = 0; index < 1000; index += 1) await sandbox.app.inject({ method: 'GET', url: `/_emulator/clock?n=${index}` });
  const read = () => sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' });
  const [first, second] = await Promise.all([read(), read()]);
  t.same([first.statusCode, second.statusCode], [200, 200], 'the second waits instead of being refused');
  t.equal(json(first).data.length, 1000);
  t.same(json(first).data.map((entry: { query: string }) => entry.query), [...Array(1000).keys()].map((index) => `n=${index}`), 'every entry, oldest first');
  t.same(json(second).data.map((entry: { query: string }) => entry.query), json(first).data.map((entry: { query: string }) => entry.query), 'the same entries');

  // one building (1000 entries: 100 turns), 16 waiting, one more refused: the order of the event loop, not of time
  const answers = await Promise.all(Array.from({ length: JOURNAL_READERS_WAITING + 2 }, read));
  const refused = answers.filter((answer) => answer.statusCode === 429);
  t.equal(refused.length, 1, 'one refused');
  t.equal(answers.filter((answer) => answer.statusCode === 200).length, JOURNAL_READERS_WAITING + 1, 'the rest answered');
  t.equal(refused[0]!.headers['retry-after'], '1');
  t.equal(json(refused[0]!).errorCode, 'TOO_MANY_REQUESTS');
  t.match(json(refused[0]!).message, /16 reads of this sandbox's request journal already wait their turn/);

  const again = await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests?limit=2' });
  t.equal(again.statusCode, 200, 'the next read is served');
  t.equal(json(again).data.length, 2);
});
