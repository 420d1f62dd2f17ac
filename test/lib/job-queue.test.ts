import t from 'tap';
import { createJobQueue } from '../../src/lib/job-queue.js';

// docs/robustness.md#off-thread-work: at most `concurrency` jobs run, the rest wait in arrival order, more than
// `maxWaiting` waiting are refused at once.

/** A job that runs until `finish` is called; `started` says whether it has begun. */
function gate() {
  let finish!: (value: string) => void;
  let fail!: (error: Error) => void;
  const state = { started: false };
  const promise = new Promise<string>((resolve, reject) => ((finish = resolve), (fail = reject)));
  return {
    state,
    finish: (value: string) => finish(value),
    fail: (error: Error) => fail(error),
    start: () => {
      state.started = true;
      return promise;
    },
  };
}

const refusal = () => new Error('refused');

t.test('two at a time, the rest in arrival order; a finished job lets the next in', async (t) => {
  const queue = createJobQueue(2, 10);
  const jobs = Array.from({ length: 5 }, gate);
  const results = jobs.map((job) => queue.run(job.start, refusal));
  t.same(jobs.map((job) => job.state.started), [true, true, false, false, false]);
  t.equal(queue.running, 2);
  t.equal(queue.waiting, 3);
  jobs[1]!.finish('b');
  t.equal(await results[1], 'b');
  t.same(jobs.map((job) => job.state.started), [true, true, true, false, false], 'the first waiting one started');
  jobs[0]!.fail(new Error('a failed'));
  await t.rejects(results[0]!, { message: 'a failed' });
  t.same(jobs.map((job) => job.state.started), [true, true, true, true, false], 'a failure frees its place too');
  for (const [index, job] of jobs.entries()) job.finish(String(index));
  t.same(await Promise.all(results.slice(2)), ['2', '3', '4']);
  t.equal(queue.running, 0);
  t.equal(queue.waiting, 0);
});

t.test('past maxWaiting a job is refused at once and never started; room again once one runs', async (t) => {
  const queue = createJobQueue(1, 2);
  const jobs = Array.from({ length: 4 }, gate);
  const results = jobs.slice(0, 3).map((job) => queue.run(job.start, refusal));
  await t.rejects(queue.run(jobs[3]!.start, refusal), { message: 'refused' });
  t.notOk(jobs[3]!.state.started, 'the refused job never ran');
  jobs[0]!.finish('first');
  await results[0];
  const again = queue.run(jobs[3]!.start, refusal);
  t.equal(queue.waiting, 2, 'it waits now');
  for (const job of jobs) job.finish('done');
  t.same(await Promise.all([...results, again]), ['first', 'done', 'done', 'done']);
});

t.test('a start that throws frees its place and rejects its own job only', async (t) => {
  const queue = createJobQueue(1, 5);
  const later = gate();
  await t.rejects(
    queue.run(() => {
      throw new Error('no thread');
    }, refusal),
    { message: 'no thread' },
  );
  const result = queue.run(later.start, refusal);
  t.ok(later.state.started, 'the next job ran at once');
  later.finish('ok');
  t.equal(await result, 'ok');
});
