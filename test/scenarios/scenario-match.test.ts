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

t.test('matches takes a text or a number; a whole object or list fails, so a word in another item cannot pass it', async (t) => {
  // docs/scenarios.md#matchers
  const runner = new RegexRunner();
  t.equal(check(true, 1250, { matches: '^12' }, runner), null, 'a number, as text');
  t.equal(check(true, true, { matches: '^true$' }, runner), null, 'a boolean, as text');
  const list = [{ type: 'ACH', status: 'ACTIVE' }, { type: 'WIRE', status: 'COMPLETED' }];
  t.equal(check(true, list, { matches: 'COMPLETED' }, runner), `matches takes a text or a number, found a list (${JSON.stringify(list)}): give the dotted path to one field, such as data.0.status`);
  t.match(check(true, { status: 'COMPLETED' }, { matches: 'COMPLETED' }, runner), /^matches takes a text or a number, found an object/);
  t.match(check(true, null, { matches: 'null' }, runner), /^matches takes a text or a number, found null/);
});
