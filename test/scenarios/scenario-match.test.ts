import t from 'tap';
import { check, MATCHES_PER_STEP, REGEX_BUDGET_MS, RegexRunner } from '../../src/scenarios/scenario.match.js';

// `matches` (docs/scenarios.md#matchers): every pattern of a step runs in one RegexRunner, whose time budget they share,
// so neither one pathological pattern nor many slow ones can hold the event loop longer than REGEX_BUDGET_MS a step.
// A pattern that backtracks exponentially stands for both: it runs out whatever budget is left, on any machine.

const EXPONENTIAL = '^(a+)+$';
const SUBJECT = `${'a'.repeat(40)}!`;

t.test('the budget is shared by the patterns of a step, and a new step starts with a full one', async (t) => {
  t.equal(REGEX_BUDGET_MS, 100);
  t.equal(MATCHES_PER_STEP, 50);
  const plain = new RegexRunner();
  t.equal(plain.test('^txn_', 'txn_1'), true);
  t.equal(plain.test('^txn_', 'usr_1'), false);
  const step = new RegexRunner();
  t.equal(step.test(EXPONENTIAL, SUBJECT), 'timeout', 'one pattern that runs out the whole budget');
  t.equal(step.test('^txn_', 'txn_1'), 'budget', 'a later pattern of the same step finds the budget spent and does not run');
  t.equal(new RegexRunner().test('^txn_', 'txn_1'), true, 'the next step has its own budget');
});

t.test('check names the pattern that ran out the time, and the step whose patterns did together', async (t) => {
  t.equal(check(true, 'txn_1', { matches: '^txn_' }, new RegexRunner()), null);
  const step = new RegexRunner();
  t.equal(check(true, SUBJECT, { matches: EXPONENTIAL }, step), `the pattern /${EXPONENTIAL}/ took longer than 100 ms on "${SUBJECT}": simplify it`);
  t.equal(
    check(true, 'txn_1', { matches: '^txn_' }, step),
    'the step\'s matches patterns took longer than 100 ms together (the time ran out at /^txn_/ on "txn_1"): simplify them or spread them over steps',
  );
  t.equal(check(true, 'txn_1', { equals: 'txn_1' }, step), null, 'other matchers take no time from the budget');
});
