// A client as an integrator would write it (docs/openapi.md#generating-a-typescript-client): types generated
// by openapi-typescript from the served /openapi.json (./generated/schema.d.ts, written by the test), calls
// made with openapi-fetch, compiled by tsc in strict mode, no casts. test/http/openapi-client.test.ts builds and
// runs it against the built server; it prints one JSON line of what it saw and exits non-zero on any surprise.
import { createHmac } from 'node:crypto';
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths, components } from './generated/schema.js';

type Transaction = components['schemas']['Transaction'];

const baseUrl = process.env.SANDBOX_URL ?? 'http://127.0.0.1:4010';
const PROGRAMME = 'prg_sandbox';
const SINGLE = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret' };
const MULTI = { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' };

function fail(message: string): never {
  throw new Error(message);
}

/** HMAC mode (docs/authentication.md): apiKey + timestamp + METHOD + path?query + raw body. */
function hmac(key: { apiKey: string; secret: string }): Middleware {
  return {
    async onRequest({ request }) {
      const url = new URL(request.url);
      const body = request.body ? await request.clone().text() : '';
      const timestamp = String(Date.now());
      const signature = createHmac('sha256', key.secret)
        .update(`${key.apiKey}${timestamp}${request.method}${url.pathname}${url.search}${body}`)
        .digest('hex');
      request.headers.set('X-Service-Api-Key', key.apiKey);
      request.headers.set('X-Service-Timestamp', timestamp);
      request.headers.set('X-Service-Program-Id', PROGRAMME);
      request.headers.set('X-Service-Signature', signature);
      return request;
    },
  };
}

const single = createClient<paths>({ baseUrl });
single.use(hmac(SINGLE));
const multi = createClient<paths>({ baseUrl });
multi.use(hmac(MULTI));
const control = createClient<paths>({ baseUrl });

// A one-page PDF written by hand: the identity document of the onboarding.
function tinyPdf(): string {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>'];
  let text = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(text.length);
    text += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(text, 'latin1').toString('base64');
}

async function main(): Promise<void> {
  const seen: Record<string, unknown> = {};
  const run = `${Date.now()}`;

  // 1. Create a user of the programme (MULTI_USER key)
  const created = await multi.POST('/v1/auth/users', { body: { externalId: `client-${run}`, type: 'PERSON', name: 'Ada Lovelace', email: 'ada@example.com' } });
  const user = created.data ?? fail(`createUser: ${created.response.status} ${JSON.stringify(created.error)}`);
  const userHeader = { 'X-Service-User-Id': user.userId };
  seen.user = user.userId;

  // 2. Onboard: enrollment, entries, submit, the review on the emulated clock
  const enrollment = await multi.GET('/v1/enrollment', { params: { header: userHeader } });
  const requestId = enrollment.data?.informationRequest?.id ?? fail(`getEnrollment: ${JSON.stringify(enrollment.error)}`);
  const written = await multi.POST('/v1/information-requests/{informationRequestId}/entries', {
    params: { path: { informationRequestId: requestId }, header: userHeader },
    body: {
      entries: [
        { key: 'legalName', value: 'Ada Lovelace' },
        { key: 'dateOfBirth', value: '1990-05-17' },
        { key: 'address', value: { line1: '500 Market Street', city: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' } },
        { key: 'taxId', value: { country: 'US', number: '123-45-6789' } },
        { key: 'identityDocument', value: { fileName: 'passport.pdf', contentType: 'application/pdf', contentBase64: tinyPdf() } },
      ],
    },
  });
  if (written.data?.validationStatus !== 'VALID') fail(`writeInformationRequestEntries: ${JSON.stringify(written.data ?? written.error)}`);
  const submitted = await multi.POST('/v1/information-requests/{informationRequestId}/submit', { params: { path: { informationRequestId: requestId }, header: userHeader } });
  if (!submitted.data) fail(`submitInformationRequest: ${JSON.stringify(submitted.error)}`);
  const reviewed = await control.POST('/_emulator/clock', { body: { advanceMs: 10_000 } });
  if (!reviewed.data) fail(`emulatorSetClock: ${JSON.stringify(reviewed.error)}`);
  const active = await multi.GET('/v1/enrollment', { params: { header: userHeader } });
  if (active.data?.status !== 'ACTIVE') fail(`the enrollment is not ACTIVE: ${JSON.stringify(active.data ?? active.error)}`);
  const accounts = await multi.GET('/v1/accounts', { params: { header: userHeader, query: { pageIndex: 0, pageSize: 10 } } });
  seen.onboardedAccounts = accounts.data?.data.map((account) => account.currency) ?? fail(`listAccounts: ${JSON.stringify(accounts.error)}`);

  // 3. Deposit (the fixture business, SINGLE_USER key), then advance the clock so it completes
  const deposit = await single.POST('/v1/sandbox/accounts/{accountId}/deposits', {
    params: { path: { accountId: 'acct_acme_usd' } },
    body: { depositInstructionId: 'di_acme_usd_ach', amount: '1250.00', reference: `client-${run}`, counterpartyName: 'Globex, Inc.' },
  });
  if (deposit.response.status !== 202) fail(`simulateDeposit: ${deposit.response.status} ${JSON.stringify(deposit.error)}`);
  const advanced = await control.POST('/_emulator/clock', { body: { advanceMs: 3_600_000 } });
  seen.clock = advanced.data?.now ?? fail(`emulatorSetClock: ${JSON.stringify(advanced.error)}`);

  // 4. List transactions with numeric paging
  const page = await single.GET('/v1/transactions', { params: { query: { pageIndex: 0, pageSize: 25, sortBy: 'CREATED_AT', sortDirection: 'DESC' } } });
  const list = page.data ?? fail(`listTransactions: ${JSON.stringify(page.error)}`);
  const pageSize: number = list.pageSize;
  const mine: Transaction | undefined = list.data.find((transaction) => transaction.debitReference === `client-${run}`);
  if (!mine) fail(`the deposit is not in the first page of ${list.totalRecords}`);
  seen.deposit = { status: mine.status, type: mine.type, pageSize };

  // 5. A beneficiary
  const beneficiary = await single.POST('/v1/beneficiaries', {
    body: {
      type: 'BUSINESS',
      businessName: 'Initrode Supplies LLC',
      email: 'ap@initrode.example',
      address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
      instruments: [
        { type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Initrode Supplies LLC', accountNumber: '987654321012', routingNumber: '021000021' },
      ],
    },
  });
  const created2 = beneficiary.data ?? fail(`createBeneficiary: ${JSON.stringify(beneficiary.error)}`);
  seen.beneficiary = created2.id;

  // 6. A transaction intent, committed
  const intentKey = `client-intent-${run}`;
  const intent = await single.POST('/v1/transaction-intents', {
    body: {
      idempotencyKey: intentKey,
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' },
      debitAmount: '100.00',
      purpose: 'PAYMENT_FOR_SERVICES',
      debitMemo: 'client journey',
    },
  });
  const preview = intent.data ?? fail(`createTransactionIntent: ${JSON.stringify(intent.error)}`);
  const commit = await single.POST('/v1/transaction-intents/{transactionIntentId}/commit', {
    params: { path: { transactionIntentId: preview.id } },
    body: { idempotencyKey: intentKey },
  });
  seen.intent = commit.data?.status ?? fail(`commitTransactionIntent: ${commit.response.status} ${JSON.stringify(commit.error)}`);

  // 7. A payout: Base64 of the json payload, text/plain, the payout signature variant (declared headers)
  const payload = Buffer.from(
    JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: created2.id, amount: '25.00', currency: 'USD', reference: `client-${run}` }),
  ).toString('base64');
  const path = '/v1/payout-origination/json';
  const timestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const signature = createHmac('sha256', SINGLE.secret).update(`${SINGLE.apiKey}${timestamp}POST${path}${payload}`).digest('hex');
  const payout = await control.POST('/v1/payout-origination/{format}', {
    params: {
      path: { format: 'json' },
      header: {
        'Idempotency-Key': `client-payout-${run}`,
        'X-Service-Timestamp': timestamp,
        'X-Service-Signature': `sha256=${signature}`,
        'X-Service-Program-Id': PROGRAMME,
      },
    },
    headers: { 'X-Service-Api-Key': SINGLE.apiKey, 'Content-Type': 'text/plain' },
    body: payload,
    bodySerializer: (body) => body,
  });
  const accepted = payout.data ?? fail(`submitPayout: ${payout.response.status} ${JSON.stringify(payout.error)}`);
  const status: 'RECEIVED' = accepted.status;
  seen.payout = { status, transactionId: accepted.transactionId };

  // An error answer is typed too: the open errorCode, validationErrors
  const missing = await single.GET('/v1/transactions/{transactionId}', { params: { path: { transactionId: 'txn_does_not_exist' } } });
  const errorCode: string | undefined = missing.error?.errorCode;
  if (missing.response.status !== 404 || errorCode !== 'NOT_FOUND') fail(`getTransaction of an unknown id: ${missing.response.status} ${JSON.stringify(missing.error)}`);
  seen.notFound = errorCode;

  process.stdout.write(`${JSON.stringify(seen)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
