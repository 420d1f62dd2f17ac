import t from 'tap';
import { runInTurns, runNow, TURN_MS, type Steps } from '../../src/lib/turns.js';

// src/lib/turns.ts (docs/control-plane.md#big-states): work written as steps runs at once, or with a turn of the event
// loop whenever TURN_MS have passed. Nothing here depends on how fast the machine is: each step below takes at least
// TURN_MS, so a turn comes after every one.

function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // a step of real work
  }
}

function* counted(steps: number, stepMs: number, log: string[]): Steps<number> {
  try {
    for (let i = 0; i < steps; i += 1) {
      busyFor(stepMs);
      log.push(`step ${i}`);
      yield;
    }
    return steps;
  } finally {
    log.push('finally');
  }
}

t.test('runNow runs every step in this turn and returns the value', async (t) => {
  const log: string[] = [];
  let turned = false;
  setImmediate(() => (turned = true));
  t.equal(runNow(counted(3, 0, log)), 3);
  t.same(log, ['step 0', 'step 1', 'step 2', 'finally']);
  t.notOk(turned, 'no turn of the event loop came in between');
});

t.test('runInTurns gives the event loop a turn between steps that take TURN_MS', async (t) => {
  const log: string[] = [];
  let ticking = true;
  const tick = () => {
    if (!ticking) return;
    log.push('turn');
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await runInTurns(counted(3, TURN_MS + 1, log));
  ticking = false;
  t.equal(value, 3);
  t.same(log.filter((entry) => entry !== 'turn'), ['step 0', 'step 1', 'step 2', 'finally']);
  const turnsBetween = log.slice(log.indexOf('step 0'), log.indexOf('step 2')).filter((entry) => entry === 'turn').length;
  t.ok(turnsBetween >= 2, `other work ran between the steps (${turnsBetween} turns)`);
});

t.test('runInTurns runs short steps together, without a turn each', async (t) => {
  const log: string[] = [];
  let turns = 0;
  const steps = (function* () {
    for (let i = 0; i < 100; i += 1) {
      log.push('step');
      yield;
    }
  })();
  setImmediate(() => (turns += 1));
  const started = performance.now();
  await runInTurns(steps);
  // steps that take no time at all: none gives a turn unless TURN_MS passed (a very busy machine may pause us)
  if (performance.now() - started < TURN_MS) t.equal(turns, 0, 'no turn was given');
  t.equal(log.length, 100);
});

t.test('runInTurns ends the steps when the work is no longer wanted: their finally runs, the reason is thrown', async (t) => {
  const log: string[] = [];
  const gone = new Error('the sandbox was closed');
  let asked = 0;
  await t.rejects(
    runInTurns(counted(10, TURN_MS + 1, log), () => {
      asked += 1;
      return asked >= 2 ? gone : null;
    }),
    gone,
  );
  t.same(log, ['step 0', 'step 1', 'finally'], 'no step after the answer, and the finally block ran');
});

t.test('work in turns goes one piece at a time, process-wide: the second waits at its first turn until the first is done', async (t) => {
  const log: string[] = [];
  const tagged = (name: string, steps: number) =>
    (function* () {
      for (let i = 0; i < steps; i += 1) {
        busyFor(TURN_MS + 1);
        log.push(`${name}${i}`);
        yield;
      }
    })();
  const first = runInTurns(tagged('a', 4));
  const second = runInTurns(tagged('b', 3)); // its first step runs at once, then it waits for its turn
  // work done within TURN_MS never waits, even while another piece takes its turns
  const quickWork = runInTurns(
    (function* () {
      yield;
    })(),
  ).then(() => log.push('quick'));
  await Promise.all([first, second, quickWork]);
  t.same(log, ['a0', 'b0', 'quick', 'a1', 'a2', 'a3', 'b1', 'b2'], 'no step of the second between the steps of the first; the quick work did not wait');

  // a piece ended part way (its sandbox closed) lets the next go too
  log.length = 0;
  const gone = new Error('closed');
  const ended = runInTurns(tagged('c', 5), () => gone);
  const after = runInTurns(tagged('d', 2));
  await t.rejects(ended, gone);
  await after;
  t.same(log, ['c0', 'd0', 'd1'], 'the ended piece stops at its first turn; the next runs to its end');
});
