import t from 'tap';
import { parse } from 'csv-parse/sync';
import { buildTestApp, json } from '../../helper.js';
import { CONTENT_BOTTOM, ROW_HEIGHT, estimatePdfPages } from '../../../src/domains/statements/statement-pdf.renderer.js';
import { PDF_PAGE_LIMIT } from '../../../src/domains/statements/statements.service.js';
import { STATEMENT_TEST_START, bulkEntries, grouped, pdfPages } from '../../helpers/statements.js';

// Multi-page PDFs (page breaks, "Page N of M") and the PDF_PAGE_LIMIT_EXCEEDED rule
// (docs/decisions.md#statement-query).

const EUR = 'acct_acme_eur';
const url = (query: string) => `/v1/accounts/${EUR}/statement?${query}`;

t.test('a multi-page PDF: page count, page numbers, every day and the balances', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  const entries = 400;
  const reference = bulkEntries(sandbox.ctx, EUR, '2026-03-01', entries, 40); // ten days of 40 entries
  sandbox.ctx.clock.freezeAt(Date.parse(STATEMENT_TEST_START));

  const statement = json(await sandbox.request('GET', url('startDate=2026-03-01&endDate=2026-03-31')));
  t.equal(statement.days.length, 10);
  const expectedPages = estimatePdfPages(statement);
  // independent bounds: rows alone need this many pages, and each page loses at most a few rows to headers
  const rowsPerPage = Math.floor((CONTENT_BOTTOM - 48) / ROW_HEIGHT);
  const lowerBound = Math.ceil(entries / rowsPerPage);
  t.ok(expectedPages >= lowerBound + 1 && expectedPages <= lowerBound + 3, `${expectedPages} pages for ${entries} entries`);

  const link = json(await sandbox.request('GET', url('startDate=2026-03-01&endDate=2026-03-31&format=pdf')));
  const parsed = new URL(link.url);
  const file = await sandbox.app.inject({ method: 'GET', url: parsed.pathname + parsed.search });
  t.equal(file.statusCode, 200);
  const pages = await pdfPages(file.rawPayload);
  t.equal(pages.length, expectedPages, 'the rendered page count is the estimated one');
  pages.forEach((text, index) => t.match(text, `Page ${index + 1} of ${pages.length}`, `footer on page ${index + 1}`));
  const all = pages.join('\n');
  t.match(all, '(continued)', 'a day running over a page break is marked');
  t.equal(all.split(reference).length - 1, entries, 'every entry row is drawn once');
  for (const day of statement.days) t.match(all, `Closing balance ${day.date}`);
  t.match(pages[0], `${grouped(statement.openingBalance)} EUR`, 'opening balance in the balances block');
  t.match(pages[0], `${grouped(statement.closingBalance)} EUR`, 'closing balance in the balances block');
  t.match(pages.at(-1)!, 'Closing balance 2026-03-10');
  for (let i = 1; i < pages.length; i += 1) t.match(pages[i]!, /Time\s+Description\s+Reference/, `table header on page ${i + 1}`);
});

t.test(`over ${PDF_PAGE_LIMIT} pages: 400 PDF_PAGE_LIMIT_EXCEEDED without rendering; CSV and JSON still work`, async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  const entries = 30_000;
  bulkEntries(sandbox.ctx, EUR, '2026-03-01', entries, 1_000);
  sandbox.ctx.clock.freezeAt(Date.parse(STATEMENT_TEST_START));

  const started = performance.now();
  const response = await sandbox.request('GET', url('startDate=2026-03-01&endDate=2026-03-31&format=pdf'));
  const elapsed = performance.now() - started;
  t.equal(response.statusCode, 400);
  const body = json(response);
  t.equal(body.errorCode, 'PDF_PAGE_LIMIT_EXCEEDED');
  t.match(body.message, /would have \d+ pages; the limit is 500/);
  t.equal(sandbox.ctx.db.prepare('SELECT COUNT(*) FROM statement_files').pluck().get(), 0, 'nothing rendered or stored');
  t.comment(`refused in ${Math.round(elapsed)} ms`); // no file stored is the proof nothing was rendered

  const csvLink = json(await sandbox.request('GET', url('startDate=2026-03-01&endDate=2026-03-31&format=csv')));
  const parsed = new URL(csvLink.url);
  const csv = await sandbox.app.inject({ method: 'GET', url: parsed.pathname + parsed.search });
  t.equal(csv.statusCode, 200);
  const rows = parse(csv.body, { columns: true }) as Array<{ balanceAfter: string }>;
  t.equal(rows.length, entries);

  const statement = json(await sandbox.request('GET', url('startDate=2026-03-01&endDate=2026-03-31')));
  t.equal(statement.days.flatMap((d: { entries: unknown[] }) => d.entries).length, entries);
  t.equal(rows.at(-1)!.balanceAfter, statement.closingBalance);

  // a shorter period of the same account fits
  const oneDay = await sandbox.request('GET', url('startDate=2026-03-01&endDate=2026-03-01&format=pdf'));
  t.equal(oneDay.statusCode, 200, 'one day of 1,000 entries renders');
});
