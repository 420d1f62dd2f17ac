import t from 'tap';
import { parse } from 'csv-parse/sync';
import { advance, buildTestApp, json, type TestApp } from '../../helper.js';
import { formatAmount } from '../../../src/lib/money.js';
import { ACCOUNT, HOLDER, LONE_CR_PAYER, PERIOD, STATEMENT_TEST_START, TRICKY_PAYER, grouped, pdfPages, seedStatementScenario } from '../../helpers/statements.js';

// docs/statements.md: CSV and PDF renderings, stored files behind signed links that expire on the emulated clock.

const FIFTEEN_MINUTES = 15 * 60 * 1000;
const statementUrl = (format: string, query = `startDate=${PERIOD.startDate}&endDate=${PERIOD.endDate}`) =>
  `/v1/accounts/${ACCOUNT}/statement?${query}&format=${format}`;

/** Path and query of an absolute link, for app.inject. */
function target(link: string): string {
  const parsed = new URL(link);
  return parsed.pathname + parsed.search;
}

async function download(sandbox: TestApp, link: string) {
  return sandbox.app.inject({ method: 'GET', url: target(link) });
}

t.test('CSV: a header row, one row per entry, RFC 4180 quoting that round-trips', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  seedStatementScenario(sandbox.ctx);
  const statement = json(await sandbox.request('GET', statementUrl('json')));

  const response = await sandbox.request('GET', statementUrl('csv'));
  t.equal(response.statusCode, 200, response.body);
  const link = json(response);
  t.same(Object.keys(link).sort(), ['expiresAt', 'url']);
  t.equal(link.expiresAt, new Date(Date.parse(STATEMENT_TEST_START) + FIFTEEN_MINUTES).toISOString(), '15 minutes of emulated time');
  t.match(link.url, /^http:\/\/localhost(:80)?\/v1\/statement-files\/sf_[a-z0-9]+\?expires=\d+&signature=[0-9a-f]{64}$/, 'absolute URL from the Host header');

  const file = await download(sandbox, link.url);
  t.equal(file.statusCode, 200);
  t.equal(file.headers['content-type'], 'text/csv; charset=utf-8');
  t.equal(file.headers['content-disposition'], `attachment; filename="statement-${ACCOUNT}-${PERIOD.startDate}-${PERIOD.endDate}.csv"`);
  t.equal(file.headers['cache-control'], 'private, no-store');

  const text = file.body;
  t.ok(text.startsWith('date,occurredAt,reference,description,direction,amount,currency,balanceBefore,balanceAfter,isFee,statusAsOfPeriodEnd\r\n'), 'header row, CRLF');
  const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
  const expected = statement.days.flatMap((day: { date: string; entries: Array<Record<string, unknown>> }) =>
    day.entries.map((entry) => ({
      date: day.date,
      occurredAt: entry.occurredAt,
      reference: entry.reference,
      description: entry.description,
      direction: entry.direction,
      amount: entry.amount,
      currency: 'USD',
      balanceBefore: entry.balanceBefore,
      balanceAfter: entry.balanceAfter,
      isFee: String(entry.isFee),
      statusAsOfPeriodEnd: entry.statusAsOfPeriodEnd,
    })),
  );
  t.equal(rows.length, 13);
  t.same(rows, expected, 'parsed CSV equals the JSON entries');
  t.ok(rows.some((row) => row.description === `Deposit from ${TRICKY_PAYER}`), 'commas, quotes, LF and CRLF survive');
  t.ok(rows.some((row) => row.description === `Deposit from ${LONE_CR_PAYER}`), 'a lone CR survives');
  t.ok(text.includes(`"Deposit from ${LONE_CR_PAYER}"`), 'a field with a lone CR is quoted');
  t.ok(text.includes('"Deposit from Weird ""Quoted"", Payer\nsecond line\r\nthird, ""line"""'), 'quoted and doubled as RFC 4180 says');
  t.ok(text.includes('"Withdrawal to Initech, LLC"'));

  // an empty period still has its header row
  const empty = await download(sandbox, json(await sandbox.request('GET', statementUrl('csv', 'startDate=2026-03-11&endDate=2026-03-12'))).url);
  t.equal(empty.body, 'date,occurredAt,reference,description,direction,amount,currency,balanceBefore,balanceAfter,isFee,statusAsOfPeriodEnd\r\n');
});

t.test('PDF: reads like a statement, with every reference and both balances', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  const scenario = seedStatementScenario(sandbox.ctx);
  const statement = json(await sandbox.request('GET', statementUrl('json')));

  const response = await sandbox.request('GET', statementUrl('PdF'));
  t.equal(response.statusCode, 200, 'format is case-insensitive');
  const file = await download(sandbox, json(response).url);
  t.equal(file.statusCode, 200);
  t.equal(file.headers['content-type'], 'application/pdf');
  t.equal(file.headers['content-disposition'], `attachment; filename="statement-${ACCOUNT}-${PERIOD.startDate}-${PERIOD.endDate}.pdf"`);
  const bytes = file.rawPayload;
  t.equal(bytes.subarray(0, 5).toString('latin1'), '%PDF-');

  const pages = await pdfPages(bytes);
  // header, instructions, balances and summary take most of page 1; the last two days go to page 2
  t.equal(pages.length, 2);
  t.match(pages[0], 'Page 1 of 2');
  t.match(pages[1], 'Page 2 of 2');
  t.match(pages[1], /Time\s+Description\s+Reference/, 'the entry table header is repeated on the new page');
  const text = pages.join('\n');
  t.match(text, /Account statement/);
  t.match(text, HOLDER);
  t.match(text, 'Acme Operating (USD) (acct_acme_usd)');
  t.match(text, '2026-03-02 to 2026-03-31');
  t.match(text, 'Deposit instructions');
  t.match(text, '021000021', 'the ACH routing number from the deposit instructions');
  t.match(text, `${grouped(formatAmount(scenario.expected.openingMinor, 2))} USD`, 'opening balance');
  t.match(text, `${grouped(formatAmount(scenario.expected.closingMinor, 2))} USD`, 'closing balance');
  t.match(text, '-1,651.83', 'summary line');
  t.match(text, 'Reversals of failed transactions');
  for (const day of statement.days) {
    for (const entry of day.entries) t.ok(text.includes(entry.reference), `reference ${entry.reference} on ${day.date}`);
    t.ok(text.includes(day.date));
  }
  t.match(text, 'In flight');

  // rendering is deterministic: the same statement twice gives the same bytes
  const again = await download(sandbox, json(await sandbox.request('GET', statementUrl('pdf'))).url);
  t.ok(Buffer.compare(again.rawPayload, bytes) === 0, 'byte-identical on a frozen clock');
});

t.test('signed links: expiry on the emulated clock, tampering, reset', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  seedStatementScenario(sandbox.ctx);

  const link = json(await sandbox.request('GET', statementUrl('csv'))).url as string;
  const parsed = new URL(link);
  const expires = parsed.searchParams.get('expires')!;
  const signature = parsed.searchParams.get('signature')!;
  t.equal(Number(expires), Date.parse(STATEMENT_TEST_START) + FIFTEEN_MINUTES);

  async function forbidden(url: string, why: string) {
    const response = await sandbox.app.inject({ method: 'GET', url });
    t.equal(response.statusCode, 403, why);
    t.equal(response.headers['content-type'], 'application/json; charset=utf-8', `${why}: error body`);
    t.equal(json(response).errorCode, 'FORBIDDEN', why);
    t.type(json(response).message, 'string');
  }

  const flipped = signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');
  await forbidden(`${parsed.pathname}?expires=${expires}&signature=${flipped}`, 'changed signature');
  await forbidden(`${parsed.pathname}?expires=${Number(expires) + 60_000}&signature=${signature}`, 'changed expires');
  await forbidden(`${parsed.pathname}?expires=${expires}`, 'no signature');
  await forbidden(`${parsed.pathname}?signature=${signature}`, 'no expires');
  await forbidden(`${parsed.pathname}?expires=${expires}&signature=not-hex`, 'malformed signature');
  await forbidden(`${parsed.pathname}?expires=1e20&signature=${signature}`, 'malformed expires');
  await forbidden(`/v1/statement-files/sf_other?expires=${expires}&signature=${signature}`, 'signature of another file');
  await forbidden(`${parsed.pathname}?expires=${expires}&signature=${signature.toUpperCase()}x`, 'extra character');
  await forbidden(`${parsed.pathname}?expires=${expires}&expires=${expires}&signature=${signature}`, 'repeated parameter');
  await forbidden(`${parsed.pathname}${'x'.repeat(40)}?expires=${expires}&signature=${signature}`, 'a longer file id');

  const upperCase = await sandbox.app.inject({ method: 'GET', url: `${parsed.pathname}?expires=${expires}&signature=${signature.toUpperCase()}` });
  t.equal(upperCase.statusCode, 200, 'hex case does not matter');

  // valid until the last millisecond before expiresAt
  await advance(sandbox, FIFTEEN_MINUTES - 1);
  const lastMoment = await download(sandbox, link);
  t.equal(lastMoment.statusCode, 200, 'still valid 1 ms before expiry');
  await advance(sandbox, 1);
  await forbidden(target(link), 'expired at expiresAt');
  t.match(json(await download(sandbox, link)).message, /expired/);

  // a fresh link after the clock moved is valid again; a reset drops the stored files
  const fresh = json(await sandbox.request('GET', statementUrl('csv')));
  t.equal(fresh.expiresAt, new Date(Date.parse(STATEMENT_TEST_START) + 2 * FIFTEEN_MINUTES).toISOString());
  t.equal((await download(sandbox, fresh.url)).statusCode, 200);
  const storedBefore = sandbox.ctx.db.prepare('SELECT COUNT(*) FROM statement_files').pluck().get();
  t.equal(storedBefore, 1, 'the expired file was purged when the fresh one was stored');
  await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset' });
  await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { freezeAt: STATEMENT_TEST_START } });
  const afterReset = await download(sandbox, fresh.url);
  t.equal(afterReset.statusCode, 404, 'a valid link to a file that is gone');
  t.equal(json(afterReset).errorCode, 'NOT_FOUND');
});

t.test('the link is built from the request Host', async (t) => {
  // any name taken (docs/robustness.md#web-pages), so an unusable one reaches the link builder
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START, config: { allowedHosts: ['*'] } });
  t.teardown(sandbox.close);
  const path = statementUrl('csv', 'startDate=2026-04-01&endDate=2026-04-15');
  const custom = await sandbox.app.inject({ method: 'GET', url: path, headers: { ...sandbox.sign('GET', path), host: 'sandbox.example:4010' } });
  t.equal(custom.statusCode, 200);
  t.match(json(custom).url, /^http:\/\/sandbox\.example:4010\/v1\/statement-files\//);
  const hostile = await sandbox.app.inject({ method: 'GET', url: path, headers: { ...sandbox.sign('GET', path), host: 'evil.example/"><script>' } });
  t.equal(hostile.statusCode, 200);
  t.match(json(hostile).url, /^http:\/\/127\.0\.0\.1:4010\/v1\/statement-files\//, 'an unusable Host falls back to the configured address');
  const guarded = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(guarded.close);
  const refused = await guarded.app.inject({ method: 'GET', url: path, headers: { ...guarded.sign('GET', path), host: 'sandbox.example:4010' } });
  t.equal(refused.statusCode, 403, 'by default a dotted name of no one\'s choosing gets no link at all');
});
