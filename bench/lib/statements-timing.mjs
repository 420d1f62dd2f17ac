// Times statements of 10,000 ledger entries (docs/statements.md#performance) on a server started in-process with the
// default fixtures: 6,000 deposits and 2,000 withdrawals with a fee (2 entries each) in March 2026, loaded through
// the fixtures' history loader (the app's own insert path). Measures, median of RUNS after one warm-up:
//   - GET /v1/accounts/acct_acme_usd/statement?format=pdf|csv over HTTP (build, render, store, link) and
//     the download of the file through its signed link;
//   - the renderers alone (renderStatementPdf / renderStatementCsv on the built statement): wall and CPU ms.
// Usage: node bench/lib/statements-timing.mjs RUNS ; prints one JSON line.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createHmac } from 'node:crypto';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src');
const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
const { startServer } = await load('server.js');
const { seedHistory } = await load('domains/transactions/history.seed.js');
const { buildStatement, validateStatementQuery } = await load('domains/statements/statements.service.js');
const { renderStatementPdf } = await load('domains/statements/statement-pdf.renderer.js');
const { renderStatementCsv } = await load('domains/statements/statement-csv.renderer.js');

const runs = Number(process.argv[2] ?? 3);
const server = await startServer({ config: { port: 0, host: '127.0.0.1', db: ':memory:', logLevel: 'silent' } });
const ctx = server.ctx;

// 8,000 transactions between 2026-03-02 and 2026-03-30: 10,000 ledger entries.
const START = Date.parse('2026-03-02T00:00:00.000Z');
const STEP = Math.floor((28 * 86_400_000) / 8_000);
const history = [];
for (let i = 0; i < 8_000; i += 1) {
  const createdMs = START + i * STEP;
  const common = { id: ctx.ids.id('transaction'), accountId: 'acct_acme_usd', createdAt: new Date(createdMs).toISOString(), completedAt: new Date(createdMs + 60_000).toISOString() };
  if (i % 4 === 3) {
    history.push({
      ...common,
      type: 'WITHDRAWAL',
      status: 'COMPLETED',
      amount: `${100 + (i % 900)}.25`,
      fee: { type: 'PROCESSING', label: 'ACH processing fee', amount: '0.50' },
      rail: 'US.USD.ACH',
      beneficiary: { id: 'ben_globex', type: 'BUSINESS', name: 'Globex Corporation' },
      bankAccount: { id: 'bi_globex_usd', displayName: 'Globex Corporation ...6789', mask: '6789' },
    });
  } else {
    history.push({
      ...common,
      type: 'DEPOSIT',
      status: 'COMPLETED',
      amount: `${500 + (i % 4000)}.75`,
      rail: i % 5 === 0 ? 'US.USD.FEDWIRE' : 'US.USD.ACH',
      payer: { displayName: ['Northwind Traders', 'Contoso Retail Ltd', 'Fabrikam Industries'][i % 3], institutionName: 'Lakeside Credit Union', accountNumber: '****2291' },
      reference: `ACH${String(i).padStart(9, '0')}`,
    });
  }
}
const programme = ctx.fixtures.programmes.find((p) => p.id === 'prg_sandbox');
ctx.db.transaction(() => seedHistory(ctx, { ...programme, history }))();

const query = { startDate: '2026-03-01', endDate: '2026-03-31' };
const caller = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
const statement = buildStatement(ctx, caller, 'acct_acme_usd', validateStatementQuery(ctx, { ...query, format: 'json' }));
const entries = statement.days.reduce((n, day) => n + day.entries.length, 0);

function signed(target) {
  const timestamp = String(Date.now());
  const signature = createHmac('sha256', 'sk_sandbox_single_secret').update(`pk_sandbox_single${timestamp}GET${target}`).digest('hex');
  return { 'X-Service-Api-Key': 'pk_sandbox_single', 'X-Service-Timestamp': timestamp, 'X-Service-Program-Id': 'prg_sandbox', 'X-Service-Signature': signature };
}

async function overHttp(format) {
  const target = `/v1/accounts/acct_acme_usd/statement?startDate=${query.startDate}&endDate=${query.endDate}&format=${format}`;
  const t0 = performance.now();
  const response = await fetch(`${server.url}${target}`, { headers: signed(target) });
  const link = await response.json();
  if (response.status !== 200) throw new Error(`statement ${format}: ${response.status} ${JSON.stringify(link)}`);
  const t1 = performance.now();
  const file = await fetch(link.url);
  const bytes = Buffer.from(await file.arrayBuffer());
  if (file.status !== 200) throw new Error(`download ${format}: ${file.status}`);
  return { requestMs: t1 - t0, downloadMs: performance.now() - t1, bytes: bytes.length, body: bytes };
}

async function rendered(render) {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const content = await render(statement);
  const wallMs = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1000, bytes: content.length };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const result = { entries, pdf: {}, csv: {} };
for (const [format, render] of [['pdf', renderStatementPdf], ['csv', renderStatementCsv]]) {
  await overHttp(format); // warm-up
  const http = [];
  for (let i = 0; i < runs; i += 1) http.push(await overHttp(format));
  const alone = [];
  for (let i = 0; i < runs; i += 1) alone.push(await rendered(render));
  result[format] = {
    httpRequestMs: median(http.map((r) => r.requestMs)),
    downloadMs: median(http.map((r) => r.downloadMs)),
    bytes: http[0].bytes,
    renderWallMs: median(alone.map((r) => r.wallMs)),
    renderCpuMs: median(alone.map((r) => r.cpuMs)),
    runs,
  };
  if (format === 'pdf') {
    const text = http[0].body.toString('latin1');
    result.pdf.pages = (text.match(/\/Type \/Page\b/g) ?? []).length;
  }
}
await server.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
