import { availableParallelism } from 'node:os';
import t from 'tap';
import { SCENARIO_READS, loadScenarioOffThread } from '../../src/scenarios/scenario.load-off-thread.js';
import { ScenarioFileError } from '../../src/scenarios/scenario.load.js';
import { buildTestApp, json } from '../helper.js';

// A client's scenario is read on a worker thread (docs/decisions.md#scenario-limits): the YAML parser takes seconds on
// a 1 MiB file, and on the main thread that would hold every sandbox's requests.

/** `steps` steps of a long story, with `tail` appended (e.g. a field no step takes). */
function story(steps: number, tail = ''): string {
  let text = 'name: long-story\nclock: 2026-03-01T12:00:00Z\nsteps:\n';
  for (let index = 0; index < steps; index++) {
    text += `  - id: s${index}\n    caption: step ${index} of a long story\n    request:\n      method: GET\n      path: /v1/accounts\n      as: programme\n    expect:\n      status: 200\n`;
  }
  return text + tail;
}

t.test('the read runs on a worker: the main thread answers requests while a file is held there', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const hold = new Int32Array(new SharedArrayBuffer(8));
  const reading = loadScenarioOffThread(story(400), 'long.yaml', { hold });
  let settled = false;
  void reading.then(
    () => (settled = true),
    () => (settled = true),
  );
  // the worker waits on the shared word; the event loop is free meanwhile
  const health = await sandbox.app.inject({ method: 'GET', url: '/_emulator/health' });
  t.equal(health.statusCode, 200, 'a request answered while the file is read');
  t.notOk(settled, 'the read is still held on its thread');
  Atomics.store(hold, 0, 1);
  Atomics.notify(hold, 0);
  const loaded = await reading;
  t.equal(loaded.scenario.name, 'long-story');
  t.equal(loaded.scenario.steps?.length, 400);
  t.equal(loaded.steps[399]!.step.line, 4 + 399 * 8, 'positions come back from the thread');
});

t.test('a bad file comes back as the loader\'s error, with its line and column', async (t) => {
  const text = story(300, '  - id: last\n    wait: 5\n');
  const error = await loadScenarioOffThread(text, 'bad.yaml').then(
    () => null,
    (caught: unknown) => caught,
  );
  t.ok(error instanceof ScenarioFileError, 'a ScenarioFileError');
  const failure = error as ScenarioFileError;
  t.equal(failure.file, 'bad.yaml');
  t.equal(failure.line, 4 + 300 * 8 + 1, 'the line of the unknown field');
  t.equal(failure.column, 5);
  t.match(failure.message, /wait/);
});

t.test('past its bound the read is refused and the thread ended; the next read gets a fresh one', async (t) => {
  const hold = new Int32Array(new SharedArrayBuffer(8));
  const error = await loadScenarioOffThread(story(1), 'held.yaml', { hold, limitMs: 50 }).then(
    () => null,
    (caught: unknown) => caught,
  );
  t.ok(error instanceof ScenarioFileError);
  t.match((error as Error).message, /took longer than 0.05 s/);
  const loaded = await loadScenarioOffThread(story(2), 'next.yaml');
  t.equal(loaded.scenario.steps?.length, 2);
});

t.test('POST /_emulator/sessions: a large sent scenario with a mistake at its end is a 400 at that line', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const text = story(450, '  - id: last\n    wait: 5\n');
  const answer = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { scenario: text } });
  t.equal(answer.statusCode, 400, answer.body.slice(0, 300));
  t.match(json(answer).message, new RegExp(`scenario:${4 + 450 * 8 + 1}:5: `));
  const sessions = await sandbox.app.inject({ method: 'GET', url: '/_emulator/sessions' });
  t.same(json(sessions).data, [], 'no session left behind');
});

t.test('reads wait their turn: one per spare core runs, 64 wait, one more is a 429', async (t) => {
  // docs/robustness.md#off-thread-work
  const running = SCENARIO_READS.running;
  t.equal(running, 0, 'nothing running before');
  const hold = new Int32Array(new SharedArrayBuffer(8));
  const spare = Math.max(1, availableParallelism() - 1);
  // every running place held on its thread
  const held = Array.from({ length: spare }, (_, index) => loadScenarioOffThread(story(1), `held-${index}.yaml`, { hold }));
  const waiting = Array.from({ length: 64 }, (_, index) => loadScenarioOffThread(story(1), `waiting-${index}.yaml`));
  t.equal(SCENARIO_READS.running, spare);
  t.equal(SCENARIO_READS.waiting, 64);
  const refused = await loadScenarioOffThread(story(1), 'one-more.yaml').then(
    () => null,
    (caught: unknown) => caught,
  );
  t.match(refused, {
    statusCode: 429,
    errorCode: 'TOO_MANY_REQUESTS',
    message: '64 scenario files are already waiting to be read; send this one again in a moment',
    retryAfterSeconds: 1, // the error handler's Retry-After (docs/errors.md#retry-after)
  });
  // the same refusal over HTTP: a session sent with a scenario while the queue is full
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const overHttp = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { scenario: story(1) } });
  t.equal(overHttp.statusCode, 429);
  t.equal(overHttp.headers['retry-after'], '1');
  t.match(json(overHttp), { errorCode: 'TOO_MANY_REQUESTS' });
  t.same(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/sessions' })).data, [], 'no session left behind');
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  t.equal(SCENARIO_READS.waiting, 64, 'still waiting, turns of the event loop later, while the running ones are held');
  Atomics.store(hold, 0, 1);
  Atomics.notify(hold, 0);
  const loaded = await Promise.all([...held, ...waiting]);
  t.equal(loaded.length, spare + 64);
  t.ok(loaded.every((each) => each.scenario.steps?.length === 1), 'every read answered');
  t.equal(SCENARIO_READS.running + SCENARIO_READS.waiting, 0);
});
