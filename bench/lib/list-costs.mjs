// Where an answer's time goes, part by part, measured in this process on its own (bench/README.md, "Where the rest
// goes"): the uncached transaction list over the 1,000,000-row database and the accounts list of the default
// fixtures, each part timed alone (median of 7 rounds, µs per call after a warm-up). The parts left out here (Node's
// HTTP parser and socket write, Fastify's routing and hooks, the journal, garbage collection) are what remains of
// the server's CPU per request measured under load (bench/run.mjs); the bare ceiling's CPU per request is the
// socket and HTTP floor.
// Usage: node bench/lib/list-costs.mjs DB_FILE ; prints one JSON line.
import { createHmac, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src');
const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
const { createContext } = await load('create-context.js');
const { prepared } = await load('db/connection.js');
const { listTransactionsJson } = await load('domains/transactions/transactions-list.service.js');
const { listTransactionsQuery } = await load('domains/transactions/transactions.schema.js');
const { listAccounts } = await load('domains/accounts/accounts.service.js');
const { accountSchema, listAccountsQuery } = await load('domains/accounts/accounts.schema.js');
const { envelopeSchema } = await load('http/pagination.js');
const { compileWriter } = await load('http/serializer.js');
const { findApiKey } = await load('domains/auth/credentials.store.js');

const [file] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/lib/list-costs.mjs DB_FILE\n');
  process.exit(2);
}

/** Median over 7 rounds of µs per call. */
function time(work, calls = 2000) {
  for (let i = 0; i < calls / 4; i += 1) work();
  const rounds = [];
  for (let round = 0; round < 7; round += 1) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i += 1) work();
    rounds.push(Number(process.hrtime.bigint() - started) / calls / 1000);
  }
  return Math.round(rounds.sort((a, b) => a - b)[3] * 10) / 10;
}

const API_KEY = 'pk_sandbox_single';
const target = '/v1/transactions';
const stamp = String(Date.now());
const canonical = `${API_KEY}${stamp}GET${target}`;
const given = createHmac('sha256', 'sk_sandbox_single_secret').update(canonical).digest('hex');

const list = createContext({ config: { db: file, logLevel: 'silent', readCache: 'off' } });
const caller = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
const query = listTransactionsQuery.parse({});
const page = listTransactionsJson(list, caller, query);
const pageSql = prepared(
  list.db,
  `SELECT IFNULL(t.rest_json, t.id) FROM transactions t WHERE t.user_id = ?
         ORDER BY t.created_at_ms DESC, t.id DESC LIMIT ? OFFSET ?`,
).pluck();
const transactions = {
  pageBytes: Buffer.byteLength(page),
  wholeAnswerUs: time(() => listTransactionsJson(list, caller, query)),
  sql: {
    pageUs: time(() => pageSql.all('usr_acme', 25, 0)),
    countersUs: time(() => prepared(list.db, 'SELECT COALESCE(SUM(n), 0) AS n FROM transaction_counts WHERE scope = ?').get('user:usr_acme')),
    apiKeyUs: time(() => findApiKey(list, API_KEY)),
    readTransactionUs: time(() => list.db.transaction(() => 0)()),
  },
  hmacCheckUs: time(() => {
    const expected = createHmac('sha256', 'sk_sandbox_single_secret').update(canonical).digest('hex');
    return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(given, 'hex'));
  }),
  queryParseUs: time(() => listTransactionsQuery.parse({})),
  utf8EncodeUs: time(() => Buffer.from(page)),
};
list.db.close();

const accountsCtx = createContext({ config: { db: ':memory:', logLevel: 'silent', readCache: 'off' } });
const accountsQuery = listAccountsQuery.parse({});
const writer = compileWriter(envelopeSchema(accountSchema));
const accountsPage = listAccounts(accountsCtx, caller, accountsQuery);
const accounts = {
  answerBytes: Buffer.byteLength(writer(accountsPage)),
  sqlUs: time(() => listAccounts(accountsCtx, caller, accountsQuery)),
  serializeUs: time(() => writer(accountsPage)),
  apiKeyUs: time(() => findApiKey(accountsCtx, API_KEY)),
  queryParseUs: time(() => listAccountsQuery.parse({})),
};
accountsCtx.db.close();
process.stdout.write(`${JSON.stringify({ transactions, accounts })}\n`);
