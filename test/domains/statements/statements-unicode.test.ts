import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_FIXTURES } from '../../../src/config.js';
import { signRequest } from '../../../src/lib/hmac.js';
import { buildTestApp, CREDENTIALS, json, type TestApp } from '../../helper.js';
import { ensureBuilt, startServerProcess } from '../../helpers/server-process.js';
import { STATEMENT_TEST_START, bulkEntries, pdfPages } from '../../helpers/statements.js';

// PDF statements for every name (docs/statements.md#fonts): the text is set in an embedded Unicode font
// (DejaVu Sans Condensed from the npm package dejavu-fonts-ttf), so Latin Extended, Greek and Cyrillic print
// as written; scripts the writer cannot set (CJK, right-to-left) print "?" while CSV and JSON keep them.
// A day split across pages repeats its heading with "(continued)"; a transfer names the other account.

const HOLDER = 'Łódź Spółka z o.o.';
const EUR_NAME = 'Ευρώ Счёт Œuvre (EUR)';
const PAYERS = {
  greek: 'Αθηναϊκή Εμπορική ΑΕ',
  cyrillic: 'ООО «Ромашка» Ёжик',
  latinExtended: 'Škoda Ďáblice ŐŰ ß',
  cjk: '北京贸易有限公司',
  arabic: 'شركة الأمل',
} as const;

function unicodeFixtures(t: Test): string {
  const fixtures = JSON.parse(readFileSync(DEFAULT_FIXTURES, 'utf8'));
  const programme = fixtures.programmes[0];
  programme.users.find((user: { id: string }) => user.id === 'usr_acme').name = HOLDER;
  programme.accounts.find((account: { id: string }) => account.id === 'acct_acme_eur').displayName = EUR_NAME;
  Object.values(PAYERS).forEach((displayName, index) => {
    programme.history.push({
      id: `txn_hist_unicode_${index + 1}`,
      accountId: 'acct_acme_eur',
      type: 'DEPOSIT',
      createdAt: `2026-03-0${index + 2}T10:00:00.000Z`,
      completedAt: `2026-03-0${index + 2}T10:05:00.000Z`,
      amount: `${100 + index}.00`,
      rail: 'EU.EUR.SEPA',
      payer: { displayName, institutionName: 'Sparkasse Sandbox', accountNumber: '****0417', bankCode: 'SSKSDE33' },
      reference: `UNICODE-${index + 1}`,
    });
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-unicode-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'fixtures.json');
  writeFileSync(file, JSON.stringify(fixtures));
  return file;
}

async function statementPdf(sandbox: TestApp, account: string, query: string): Promise<{ pages: string[]; bytes: Buffer }> {
  const link = await sandbox.request('GET', `/v1/accounts/${account}/statement?${query}&format=pdf`);
  if (link.statusCode !== 200) throw new Error(`statement: ${link.statusCode} ${link.body}`);
  const url = new URL(json(link).url);
  const file = await sandbox.app.inject({ method: 'GET', url: url.pathname + url.search });
  if (file.statusCode !== 200) throw new Error(`download: ${file.statusCode}`);
  return { pages: await pdfPages(file.rawPayload), bytes: file.rawPayload };
}

t.test('names in Latin Extended, Greek and Cyrillic print as written; unset scripts print "?"', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START, config: { fixtures: unicodeFixtures(t) } });
  t.teardown(sandbox.close);
  const { pages, bytes } = await statementPdf(sandbox, 'acct_acme_eur', 'startDate=2026-03-01&endDate=2026-03-31');
  const text = pages.join('\n');
  t.match(text, HOLDER, 'the holder as written');
  t.match(text, `${EUR_NAME} (acct_acme_eur)`, 'the account name as written');
  for (const name of [PAYERS.greek, PAYERS.cyrillic, PAYERS.latinExtended]) t.match(text, `Deposit from ${name}`, name);
  t.match(pages[0], `${HOLDER} - acct_acme_eur - 2026-03-01 to 2026-03-31`, 'the footer too');
  t.equal(text.split('?').length - 1, [...PAYERS.cjk].length + [...PAYERS.arabic.replace(' ', '')].length, 'the only "?" are the CJK and Arabic letters');
  t.match(text, `Deposit from ${'?'.repeat([...PAYERS.cjk].length)}`, 'CJK (no glyph in the font) prints as ?');
  t.match(text, /Deposit from \?{4} \?{5}/, 'Arabic (right to left, joined letters) prints as ?');
  t.match(bytes.toString('latin1'), /\/FontFile2/, 'a TrueType font is embedded');
  t.match(bytes.toString('latin1'), /\/BaseFont \/[A-Z]{6}\+DejaVuSansCondensed\b/, 'as a subset of DejaVu Sans Condensed');
  t.notMatch(bytes.toString('latin1'), /\/BaseFont \/Helvetica/, 'no standard (WinAnsi-only) font');

  // JSON and CSV keep every character, including those the PDF cannot set
  const statement = json(await sandbox.request('GET', '/v1/accounts/acct_acme_eur/statement?startDate=2026-03-01&endDate=2026-03-31'));
  t.equal(statement.holderName, HOLDER);
  const descriptions = statement.days.flatMap((day: { entries: Array<{ description: string }> }) => day.entries.map((entry) => entry.description));
  for (const name of Object.values(PAYERS)) t.ok(descriptions.includes(`Deposit from ${name}`), `JSON keeps ${name}`);

  // deterministic: the same statement renders to the same bytes (the parsed font is reused from the first render)
  const again = await statementPdf(sandbox, 'acct_acme_eur', 'startDate=2026-03-01&endDate=2026-03-31');
  t.equal(again.bytes.equals(bytes), true, 'byte-identical');
});

t.test('a transfer names the other account on both statements', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START, config: { fixtures: unicodeFixtures(t) } });
  t.teardown(sandbox.close);
  // the fixtures' history: 5,000.00 USD from acct_acme_usd to acct_acme_eur on 2026-01-12
  const query = 'startDate=2026-01-01&endDate=2026-01-31';
  const usd = json(await sandbox.request('GET', `/v1/accounts/acct_acme_usd/statement?${query}`));
  const eur = json(await sandbox.request('GET', `/v1/accounts/acct_acme_eur/statement?${query}`));
  const entriesOf = (statement: { days: Array<{ entries: Array<{ description: string; direction: string; amount: string }> }> }) =>
    statement.days.flatMap((day) => day.entries);
  t.match(
    entriesOf(usd).filter((entry) => entry.description.startsWith('Transfer')),
    [{ description: `Transfer to ${EUR_NAME} (acct_acme_eur)`, direction: 'DEBIT', amount: '5000.00' }],
  );
  t.match(
    entriesOf(eur).filter((entry) => entry.description.startsWith('Transfer')),
    [{ description: 'Transfer from Acme Operating (USD) (acct_acme_usd)', direction: 'CREDIT', amount: '4577.00' }],
  );
  // a deposit or a payout names its payer or beneficiary, not an account
  t.ok(entriesOf(usd).some((entry) => entry.description === 'Deposit from Northwind Traders'));
  t.ok(entriesOf(usd).some((entry) => entry.description === 'Withdrawal to Globex Corporation'));

  const usdPdf = (await statementPdf(sandbox, 'acct_acme_usd', query)).pages.join('\n');
  const eurPdf = (await statementPdf(sandbox, 'acct_acme_eur', query)).pages.join('\n');
  // the description column is narrow: the name is cut with an ellipsis, the direction and start remain
  t.match(usdPdf, /Transfer to Ευρώ Счёт/);
  t.match(eurPdf, /Transfer from Acme Operating/);
  const eurCsv = json(await sandbox.request('GET', `/v1/accounts/acct_acme_eur/statement?${query}&format=csv`));
  const csvUrl = new URL(eurCsv.url);
  const csv = (await sandbox.app.inject({ method: 'GET', url: csvUrl.pathname + csvUrl.search })).body;
  t.match(csv, 'Transfer from Acme Operating (USD) (acct_acme_usd)', 'the CSV names it in full');
});

t.test('a day split across pages repeats its heading with "(continued)" on each new page', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START, config: { fixtures: unicodeFixtures(t) } });
  t.teardown(sandbox.close);
  // 150 entries on Tuesday 2026-03-10 and 10 on Wednesday 2026-03-11: the first day runs over pages
  bulkEntries(sandbox.ctx, 'acct_acme_eur', '2026-03-10', 160, 150);
  sandbox.ctx.clock.freezeAt(Date.parse(STATEMENT_TEST_START));
  const { pages } = await statementPdf(sandbox, 'acct_acme_eur', 'startDate=2026-03-10&endDate=2026-03-11');
  t.ok(pages.length >= 3, `${pages.length} pages`);
  const headingLines = (page: string) => page.split('\n').filter((line) => /^(Tuesday|Wednesday) 2026-03-1[01]/.test(line));
  t.same(headingLines(pages[0]!), ['Tuesday 2026-03-10'], 'the first page opens the day');
  const continued = pages.slice(1).filter((page) => headingLines(page)[0] === 'Tuesday 2026-03-10 (continued)');
  t.ok(continued.length >= 1, 'the next page(s) repeat the heading, marked (continued)');
  for (let i = 1; i < pages.length; i += 1) {
    const lines = headingLines(pages[i]!);
    const firstEntry = pages[i]!.split('\n').findIndex((line) => /^Bulk entry \d+/.test(line));
    const heading = pages[i]!.split('\n').findIndex((line) => /^(Tuesday|Wednesday) 2026-03-1[01]/.test(line));
    if (firstEntry >= 0) t.ok(heading >= 0 && heading < firstEntry, `page ${i + 1}: a day heading comes before its first entry`);
    t.ok(lines.every((line) => !line.startsWith('Wednesday') || !line.endsWith('(continued)')), `page ${i + 1}: Wednesday fits and is not continued`);
  }
  const text = pages.join('\n');
  t.equal(text.split('Wednesday 2026-03-11').length - 1, 1, 'Wednesday heading once');
  t.equal(text.split('Closing balance 2026-03-10').length - 1, 1, 'one closing line per day');
});

t.test('the built server (dist/service-sandbox.mjs) finds the font files in node_modules at run time', async (t) => {
  await ensureBuilt();
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-unicode-built-'));
  const server = await startServerProcess({ db: path.join(dir, 'state.db'), clock: STATEMENT_TEST_START, extraArgs: ['--fixtures', unicodeFixtures(t)] });
  t.teardown(async () => {
    await server.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  const target = '/v1/accounts/acct_acme_eur/statement?startDate=2026-03-01&endDate=2026-03-31&format=pdf';
  const timestamp = String(Date.now());
  const headers = {
    'x-service-api-key': CREDENTIALS.single.apiKey,
    'x-service-timestamp': timestamp,
    'x-service-program-id': CREDENTIALS.programmeId,
    'x-service-signature': signRequest({ apiKey: CREDENTIALS.single.apiKey, secret: CREDENTIALS.single.secret, timestamp, method: 'GET', target }),
  };
  const link = await fetch(`${server.url}${target}`, { headers });
  t.equal(link.status, 200);
  const file = await fetch(((await link.json()) as { url: string }).url);
  t.equal(file.status, 200);
  const text = (await pdfPages(Buffer.from(await file.arrayBuffer()))).join('\n');
  t.match(text, HOLDER);
  t.match(text, `Deposit from ${PAYERS.cyrillic}`);
});
