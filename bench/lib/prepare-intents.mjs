// Prepares a database file for the commit benchmark through the app's own services: the default fixtures,
// a completed 5,000,000.00 USD deposit into acct_acme_usd (so every commit has funds), then COUNT intents
// (1.00 USD to Globex's US bank account over ACH) created with createIntent exactly as
// POST /v1/transaction-intents does. Prints one JSON line: [{ id, idempotencyKey }].
// Usage: node bench/lib/prepare-intents.mjs DB_FILE COUNT
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fundAcme } from './fund-acme.mjs';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src');
const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
const { createContext } = await load('create-context.js');
const { createIntent } = await load('domains/intents/intents.service.js');
const { createIntentBody } = await load('domains/intents/intents.schema.js');

const [file, countText] = process.argv.slice(2);
const count = Number(countText);
const ctx = createContext({ config: { db: file, logLevel: 'silent' } });
const caller = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
const fundedAt = new Date(Date.now() - 3_600_000).toISOString();
fundAcme(ctx, fundedAt);
const intents = [];
const BATCH = 1000;
for (let start = 0; start < count; start += BATCH) {
  ctx.db.transaction(() => {
    for (let i = start; i < Math.min(count, start + BATCH); i += 1) {
      const body = createIntentBody.parse({
        idempotencyKey: `bench-commit-${i}`,
        debitAccountId: 'acct_acme_usd',
        credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
        creditAmount: '1.00',
      });
      const { intent } = createIntent(ctx, caller, body);
      intents.push({ id: intent.id, idempotencyKey: body.idempotencyKey });
    }
  }).immediate();
}
ctx.db.pragma('wal_checkpoint(TRUNCATE)');
ctx.db.close();
process.stdout.write(`${JSON.stringify(intents)}\n`);
