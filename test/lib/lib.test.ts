import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import fc from 'fast-check';
import { openDatabase } from '../../src/db/connection.js';
import { databaseCounter } from '../../src/db/id-counter.js';
import { createClock } from '../../src/lib/clock.js';
import { isHttpUrl } from '../../src/lib/http-url.js';
import { canonicalRequest, hexDigestsEqual, hmacSha256Hex, signRequest } from '../../src/lib/hmac.js';
import { createIdSource, ID_PREFIXES, type CounterStore } from '../../src/lib/ids.js';
import { convertMinor, divideRounded, formatAmount, MoneyFormatError, parseAmount, parseDecimal } from '../../src/lib/money.js';
import { assertTransition, canTransition, InvalidTransitionError, isFinal } from '../../src/lib/state-machine.js';

// lib/: money (docs/decisions.md#exact-money: exact minor units), ids (deterministic per seed), clock, hmac, state
// machines.

t.test('money: parseAmount', async (t) => {
  const USD = 2;
  const JPY = 0;
  const USDC = 6;
  t.equal(parseAmount('1.00', USD), 100n);
  t.equal(parseAmount('1', USD), 100n);
  t.equal(parseAmount('1.5', USD), 150n);
  t.equal(parseAmount('0.01', USD), 1n);
  t.equal(parseAmount('0', USD), 0n);
  t.equal(parseAmount('007.50', USD), 750n, 'leading zeros are still a plain decimal');
  t.equal(parseAmount('12345678901234567890.12', USD), 1234567890123456789012n, 'beyond float precision, exact');
  t.equal(parseAmount('1500', JPY), 1500n);
  t.equal(parseAmount('0.000001', USDC), 1n);
  t.equal(parseAmount('1.1', USDC), 1_100_000n);

  const refused: Array<[string, number, RegExp]> = [
    ['1.001', USD, /3 decimals; this currency allows at most 2/],
    ['1.000', USD, /at most 2/],
    ['1.5', JPY, /at most 0/],
    ['0.0000001', USDC, /at most 6/],
    ['-1', USD, /no sign or exponent/],
    ['+1', USD, /no sign/],
    ['1e3', USD, /no sign or exponent/],
    ['1E3', USD, /exponent/],
    ['', USD, /plain decimal/],
    ['.5', USD, /plain decimal/],
    ['1.', USD, /plain decimal/],
    [' 1', USD, /plain decimal/],
    ['1,00', USD, /plain decimal/],
    ['0x10', USD, /plain decimal/],
    ['NaN', USD, /plain decimal/],
    ['Infinity', USD, /plain decimal/],
    ['１', USD, /plain decimal/],
  ];
  for (const [value, precision, message] of refused) {
    t.throws(() => parseAmount(value, precision), MoneyFormatError, JSON.stringify(value));
    t.throws(() => parseAmount(value, precision), { message }, `${JSON.stringify(value)} message`);
  }
});

t.test('money: formatAmount', async (t) => {
  t.equal(formatAmount(100n, 2), '1.00');
  t.equal(formatAmount(5n, 2), '0.05');
  t.equal(formatAmount(-5n, 2), '-0.05');
  t.equal(formatAmount(0n, 2), '0.00');
  t.equal(formatAmount(1500n, 0), '1500');
  t.equal(formatAmount(-100n, 0), '-100');
  t.equal(formatAmount(1n, 6), '0.000001');
  t.equal(formatAmount(1234567890123456789012n, 2), '12345678901234567890.12');
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }), (minor, precision) => {
      return parseAmount(formatAmount(minor, precision), precision) === minor;
    }),
    { seed: 1 },
  );
  t.pass('format then parse is the identity for every non-negative amount and precision');
});

t.test('money: rounding and conversion', async (t) => {
  t.equal(divideRounded(5n, 2n), 3n, 'half up');
  t.equal(divideRounded(-5n, 2n), -3n, 'half away from zero for negatives');
  t.equal(divideRounded(4n, 3n), 1n);
  t.equal(divideRounded(5n, 3n), 2n);
  t.throws(() => divideRounded(1n, 0n), RangeError);
  t.same(parseDecimal('0.920000'), { units: 920000n, scale: 6 });
  t.throws(() => parseDecimal('-1.5'), MoneyFormatError);
  t.equal(convertMinor(10_000n, 2, parseDecimal('0.92'), 2), 9_200n, '100.00 USD at 0.92 is 92.00 EUR');
  t.equal(convertMinor(100n, 2, parseDecimal('151.25'), 0), 151n, '1.00 USD at 151.25 is 151 JPY (151.25 rounds down)');
  t.equal(convertMinor(1n, 2, parseDecimal('151.25'), 0), 2n, '0.01 USD is 1.5125 JPY, rounds to 2');
  t.equal(convertMinor(1_234_567n, 6, parseDecimal('1'), 2), 123n, '1.234567 USDC is 1.23 USD');
  t.equal(convertMinor(1_235_000n, 6, parseDecimal('1.000000'), 2), 124n, '1.235 rounds half up to 1.24');
});

function memoryCounter(): CounterStore {
  let value = 0;
  return { next: () => (value += 1) };
}

t.test('ids: prefixed, deterministic per seed', async (t) => {
  const draw = (seed: string) => {
    const ids = createIdSource(seed, memoryCounter());
    return [ids.id('user'), ids.id('account'), ids.id('transaction'), ids.digits(12), ids.hex(40), ids.reference(), ids.reference('REF')];
  };
  const a = draw('seed-a');
  t.same(draw('seed-a'), a, 'same seed, same sequence');
  t.not(draw('seed-b')[0], a[0], 'another seed, other ids');
  t.match(a[0], /^usr_[0-9a-hjkmnp-tv-z]{16}$/);
  t.match(a[1], /^acct_[0-9a-z]{16}$/);
  t.match(a[2], /^txn_[0-9a-z]{16}$/);
  t.match(a[3], /^\d{12}$/);
  t.match(a[4], /^[0-9a-f]{40}$/);
  t.match(a[5], /^SBX[0-9A-Z]{10}$/);
  t.match(a[6], /^REF[0-9A-Z]{10}$/);
  t.equal(ID_PREFIXES.informationRequest, 'ir', 'docs/decisions.md#id-prefixes');

  const ids = createIdSource('seed-a', memoryCounter());
  const many = new Set(Array.from({ length: 2000 }, () => ids.id('transaction')));
  t.equal(many.size, 2000, 'no collisions in 2000 draws');
});

t.test('ids: the counter is persisted, and a rolled-back draw is not consumed', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-ids-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'ids.db');
  const reference = createIdSource('seed-p', memoryCounter());
  const expected = Array.from({ length: 5 }, () => reference.id('user'));

  const db1 = openDatabase(file);
  const first = createIdSource('seed-p', databaseCounter(db1));
  t.same([first.id('user'), first.id('user'), first.id('user')], expected.slice(0, 3));
  db1.close();

  const db2 = openDatabase(file);
  const afterRestart = createIdSource('seed-p', databaseCounter(db2));
  let rolledBack = '';
  t.throws(() =>
    db2.transaction(() => {
      rolledBack = afterRestart.id('user');
      throw new Error('request failed');
    })(),
  );
  t.equal(rolledBack, expected[3]);
  t.equal(afterRestart.id('user'), expected[3], 'the rolled-back id is handed out again');
  t.equal(afterRestart.id('user'), expected[4], 'a restarted file database continues the sequence, never repeating an id');
  db2.close();
});

t.test('clock: frozen, advanced, resumed, restored', async (t) => {
  let wall = Date.parse('2026-01-01T00:00:00.000Z');
  const frozenAt = Date.parse('2026-03-01T12:00:00.000Z');
  const clock = createClock({ mode: 'frozen', atMs: frozenAt }, () => wall);
  t.equal(clock.nowMs(), frozenAt);
  wall += 10_000;
  t.equal(clock.nowMs(), frozenAt, 'a frozen clock ignores the wall clock');
  t.equal(clock.nowIso(), '2026-03-01T12:00:00.000Z', 'ISO 8601 UTC with milliseconds');
  t.equal(clock.now().getTime(), frozenAt);
  t.equal(clock.realNowMs(), wall, 'realNowMs is the wall clock (HMAC skew)');
  clock.advance(1500);
  t.equal(clock.nowIso(), '2026-03-01T12:00:01.500Z');
  t.same(clock.state(), { mode: 'frozen', frozenAtMs: frozenAt + 1500 });

  clock.resume();
  t.equal(clock.state().mode, 'realtime');
  t.equal(clock.nowMs(), frozenAt + 1500, 'resuming continues from the emulated instant');
  wall += 250;
  t.equal(clock.nowMs(), frozenAt + 1750, 'and then flows with the wall clock');
  clock.advance(1000);
  t.equal(clock.nowMs(), frozenAt + 2750, 'advancing a flowing clock shifts its offset');
  wall += 250;
  t.equal(clock.nowMs(), frozenAt + 3000);

  clock.freezeAt(frozenAt + 60_000);
  wall += 5000;
  t.equal(clock.nowMs(), frozenAt + 60_000);
  clock.restoreInitial();
  t.equal(clock.nowMs(), frozenAt, 'restoreInitial goes back to the start state (reset)');

  const realtime = createClock({ mode: 'realtime' }, () => wall);
  t.equal(realtime.nowMs(), wall);
  realtime.advance(3_600_000);
  t.equal(realtime.nowMs(), wall + 3_600_000);
  realtime.restoreInitial();
  t.equal(realtime.nowMs(), wall);
});

t.test('hmac: canonical string and constant-time comparison (docs/decisions.md#hmac-canonical-string)', async (t) => {
  const canonical = canonicalRequest('pk_key', '1700000000000', 'get', '/v1/accounts?pageSize=2', '');
  t.equal(canonical.toString(), 'pk_key1700000000000GET/v1/accounts?pageSize=2', 'no separators, upper-case method');
  const withBody = canonicalRequest('pk_key', '1', 'POST', '/v1/x', Buffer.from([0xff, 0x00, 0x41]));
  t.same([...withBody.subarray(-3)], [0xff, 0x00, 0x41], 'raw body bytes, byte for byte');
  // A known vector, computed independently: printf '%s' 'pk_key1700000000000GET/v1/accounts' | openssl dgst -sha256 -hmac secret
  t.equal(
    signRequest({ apiKey: 'pk_key', secret: 'secret', timestamp: '1700000000000', method: 'GET', target: '/v1/accounts' }),
    '3bc2dc97bcccb2e6981bf12e590ade7035635c0ae3fcf7b30639d4c380304619',
  );
  t.equal(hmacSha256Hex('key', 'The quick brown fox jumps over the lazy dog'), 'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8', 'known answer (openssl dgst -sha256 -hmac key)');
  const digest = hmacSha256Hex('k', 'v');
  t.ok(hexDigestsEqual(digest, digest));
  t.ok(hexDigestsEqual(digest, digest.toUpperCase()), 'upper-case hex accepted');
  t.notOk(hexDigestsEqual(digest, digest.slice(0, -1)), 'shorter');
  t.notOk(hexDigestsEqual(digest, `${digest}00`), 'longer');
  t.notOk(hexDigestsEqual(digest, `${digest.slice(0, -1)}g`), 'not hex');
  t.notOk(hexDigestsEqual(digest, ''), 'empty');
  t.notOk(hexDigestsEqual(digest, `${digest.slice(0, -1)}${digest.endsWith('0') ? '1' : '0'}`), 'one digit off');
});

t.test('state machines as data', async (t) => {
  const table = { CREATED: ['COMMITTED', 'CANCELED'], COMMITTED: [], CANCELED: [] } as const;
  t.ok(canTransition(table, 'CREATED', 'COMMITTED'));
  t.notOk(canTransition(table, 'COMMITTED', 'CREATED'));
  t.ok(isFinal(table, 'CANCELED'));
  t.notOk(isFinal(table, 'CREATED'));
  t.doesNotThrow(() => assertTransition('intent', table, 'CREATED', 'CANCELED'));
  t.throws(() => assertTransition('intent', table, 'CANCELED', 'COMMITTED'), InvalidTransitionError);
  t.throws(() => assertTransition('intent', table, 'CANCELED', 'COMMITTED'), { message: /intent cannot move from CANCELED to COMMITTED; .*final state/ });
});

// docs/webhooks.md#pointing-it-at-your-app: the one URL rule of the server, the CLI and the kits' forwarders
t.test('isHttpUrl: an http(s) scheme in any case and a URL the parser takes', async (t) => {
  for (const good of ['http://127.0.0.1:3000/webhooks', 'https://app.example/hook?x=1', 'HTTP://127.0.0.1/x', 'Https://a/b', 'http://127.0.0.1:9/a b"<x>']) {
    t.ok(isHttpUrl(good), `${good}: taken`);
  }
  for (const bad of ['', 'ftp://a/b', '127.0.0.1:3000', 'http:/a', 'http://a b/', 'javascript:alert(1)', ' http://a/', 'http://[::1/']) {
    t.notOk(isHttpUrl(bad), `${JSON.stringify(bad)}: refused`);
  }
});
