import t from 'tap';
import { buildTestApp, json } from '../helper.js';

// docs/test-kit.md#request-journal: a read builds its answer 10 entries a turn, and a sandbox's journal is read by one
// request at a time (another meanwhile: 429 with Retry-After), so reads of a full journal neither hold every sandbox
// for seconds nor stack up in memory.

t.test('two reads of one journal at once: one answers, the other is a 429 with Retry-After; the same entries as before', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  for (let index = 0; index < 300; index += 1) await sandbox.app.inject({ method: 'GET', url: `/_emulator/clock?n=${index}` });
  const [first, second] = await Promise.all([
    sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' }),
    sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' }),
  ]);
  t.same([first.statusCode, second.statusCode].sort(), [200, 429]);
  const refused = first.statusCode === 429 ? first : second;
  t.equal(refused.headers['retry-after'], '1');
  t.equal(json(refused).errorCode, 'TOO_MANY_REQUESTS');
  t.match(json(refused).message, /being read by another request/);
  const answered = json(first.statusCode === 200 ? first : second);
  t.equal(answered.data.length, 300);
  t.same(answered.data.map((entry: { query: string }) => entry.query), [...Array(300).keys()].map((index) => `n=${index}`), 'every entry, oldest first');

  const again = await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests?limit=2' });
  t.equal(again.statusCode, 200, 'the next read, once the first is answered, is served');
  t.same(json(again).data.map((entry: { query: string }) => entry.query), ['n=298', 'n=299']);
});
