import t from 'tap';
import fc from 'fast-check';
import { pathPattern } from '../../src/faults/fault-rules.service.js';

// docs/faults.md#fault-rules: `*` is one or more characters of one segment, `**` any run of segments; trailing slashes
// do not matter. Matched without a regular expression, so no pattern can hold the event loop.

t.test('what a pattern matches', async (t) => {
  const cases: Array<[string, string, boolean]> = [
    ['/v1/intents/*/commit', '/v1/intents/int_1/commit', true],
    ['/v1/intents/*/commit', '/v1/intents/int_1/commit/', true],
    ['/v1/intents/*/commit', '/v1/intents//commit', false],
    ['/v1/intents/*/commit', '/v1/intents/a/b/commit', false],
    ['/v1/accounts/**', '/v1/accounts/acct_1/transactions', true],
    ['/v1/accounts/**', '/v1/accounts/', true],
    ['/v1/accounts/**', '/v1/accounts', false],
    ['/v1/**/deposits', '/v1/sandbox/accounts/acct_1/deposits', true],
    ['/v1/**/deposits', '/v1/deposits', false],
    ['/v1/transactions', '/v1/transactions/', true],
    ['/v1/transactions/', '/v1/transactions', true],
    ['/v1/transactions', '/v1/transactionsX', false],
    ['/v1/txn_*', '/v1/txn_1', true],
    ['/v1/txn_*', '/v1/txn_', false],
    ['/', '/', true],
    ['/', '/v1', false],
    ['/**', '/anything/at/all', true],
    ['/v1/a.b', '/v1/aXb', false],
  ];
  for (const [pattern, path, expected] of cases) t.equal(pathPattern(pattern).test(path), expected, `${pattern} on ${path}`);
});

t.test('a run of ** before a character the path lacks answers at once (it backtracked without end as a regex)', async (t) => {
  const path = `/${'a'.repeat(300)}`;
  t.equal(pathPattern(`/${'**'.repeat(40)}x`).test(path), false);
  t.equal(pathPattern(`/${'**a'.repeat(100)}x`).test(path), false);
  t.equal(pathPattern(`/${'*a'.repeat(100)}x`).test(path), false);
  t.equal(pathPattern(`/${'**a'.repeat(100)}`).test(path), true);
});

t.test('the same answers as the regular expression it replaced, on small patterns and paths', async (t) => {
  const regexOf = (pattern: string) =>
    new RegExp(
      `^${pattern
        .replace(/\/+$/, '')
        .split(/(\*\*|\*)/)
        .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
        .join('')}/?$`,
    );
  const text = (chars: string[]) => fc.array(fc.constantFrom(...chars), { maxLength: 10 }).map((parts) => parts.join(''));
  fc.assert(
    fc.property(text(['a', 'b', '/', '*', '**', '.']), text(['a', 'b', '/', '.']), (pattern, path) => {
      const full = `/${pattern}`;
      const target = `/${path}`;
      return pathPattern(full).test(target) === regexOf(full).test(target);
    }),
    { numRuns: 5000, seed: 20261128 },
  );
  t.pass('5,000 pairs agree');
});
