import { createHmac } from 'node:crypto';
import { buildApp } from '../src/app.js';
import { createContext } from '../src/create-context.js';
import { createClock } from '../src/lib/clock.js';
import { signRequest } from '../src/lib/hmac.js';
import type { ExamplesFile } from '../src/http/openapi-examples.js';

// Captures the examples of the OpenAPI document (docs/openapi.md#examples): real answers of the default
// fixtures, taken by `captureExamples()` from a fresh app on an in-memory database with a frozen clock.
// scripts/openapi.mjs writes them to openapi/examples.json, which the document builder only reads
// (src/http/openapi-examples.ts); test/http/openapi-examples.test.ts captures them again and fails when the file
// differs. A script, not runtime code: it builds the whole app (docs/architecture.md#layers).

type Json = Record<string, any>;

const START = '2026-03-01T12:00:00.000Z';
const HOST = '127.0.0.1:4010';
const SINGLE = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret' };
const MULTI = { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' };
// Access tokens are random; the example shows the shape with a fixed value.
const TOKEN_EXAMPLE = 'sbx_at_Xk3v9QeH2cJmT7wRb1sLp8ZyNf4aGd6u';

interface Step {
  operationId: string;
  name: string;
  summary: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: unknown;
  /** Payout bodies are Base64 text with the payout signature variant. */
  payout?: { idempotencyKey: string };
  as?: { apiKey: string; secret: string; userId?: string } | { bearer: string } | 'none';
  expect: number;
  /** Keep the body as a request example of the operation. */
  requestExample?: boolean;
}

/**
 * Run the journey on a fresh app built from the default fixtures and return the examples. The app and its
 * database are closed before this returns.
 */
export async function captureExamples(): Promise<ExamplesFile> {
  const ctx = createContext({ config: { logLevel: 'silent', db: ':memory:' }, clock: createClock({ mode: 'frozen', atMs: Date.parse(START) }) });
  const app = await buildApp(ctx);
  const out: ExamplesFile = {};
  const answers = new Map<string, Json>();
  const problems: string[] = [];

  const run = async (step: Step): Promise<Json> => {
    const payload = step.body === undefined ? undefined : typeof step.body === 'string' ? step.body : JSON.stringify(step.body);
    const headers: Record<string, string> = { host: HOST };
    const as: Step['as'] = step.as ?? SINGLE;
    if (as !== 'none' && 'bearer' in as) headers.authorization = `Bearer ${as.bearer}`;
    else if (as !== 'none' && step.payout) {
      const timestamp = new Date(Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const signature = createHmac('sha256', as.secret).update(`${as.apiKey}${timestamp}POST${step.url}${payload ?? ''}`).digest('hex');
      Object.assign(headers, {
        'x-service-api-key': as.apiKey,
        'x-service-timestamp': timestamp,
        'x-service-program-id': 'prg_sandbox',
        'x-service-signature': `sha256=${signature}`,
        'idempotency-key': step.payout.idempotencyKey,
        'content-type': 'text/plain',
      });
      if (as.userId) headers['x-service-user-id'] = as.userId;
    } else if (as !== 'none') {
      const timestamp = String(Date.now());
      Object.assign(headers, {
        'x-service-api-key': as.apiKey,
        'x-service-timestamp': timestamp,
        'x-service-program-id': 'prg_sandbox',
        'x-service-signature': signRequest({ apiKey: as.apiKey, secret: as.secret, timestamp, method: step.method, target: step.url, body: payload ?? '' }),
      });
      if (as.userId) headers['x-service-user-id'] = as.userId;
    }
    if (payload !== undefined && !step.payout) headers['content-type'] = 'application/json';
    const answer = await app.inject({ method: step.method, url: step.url, payload, headers });
    if (answer.statusCode !== step.expect) {
      problems.push(`example ${step.operationId}/${step.name}: ${step.method} ${step.url} answered ${answer.statusCode}, expected ${step.expect}: ${answer.body.slice(0, 400)}`);
    }
    const raw: unknown = answer.body ? JSON.parse(answer.body) : undefined;
    const value = normalize(raw);
    const entry = (out[step.operationId] ??= { responses: {} });
    if (value !== undefined) (entry.responses[String(step.expect)] ??= {})[step.name] = { summary: step.summary, value };
    if (step.requestExample && step.body !== undefined) (entry.request ??= {})[step.name] = { summary: step.summary, value: step.body };
    // the document's X-Service-User-Id example of an operation whose path names this user's resource (openapi-document.ts)
    if (step.expect < 300 && as !== 'none' && 'userId' in as && as.userId && as.userId !== 'usr_acme') entry.user = as.userId;
    answers.set(`${step.operationId}/${step.name}`, raw as Json);
    return raw as Json;
  };

  try {
    const steps = journey();
    const named = new Set<string>();
    for (const step of steps) {
      const resolved = typeof step === 'function' ? step(answers) : step;
      if (resolved) {
        named.add(resolved.operationId);
        await run(resolved);
      }
    }
    const document = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body) as Json;
    for (const step of defaultSteps(document, named)) await run(step);
    if (problems.length > 0) {
      throw new Error(
        `the examples journey went off course (journey() in scripts/openapi-examples.ts; an operation it does not name gets the default steps of defaultSteps()):\n${problems.join('\n')}`,
      );
    }
  } finally {
    await app.close();
    ctx.db.close();
  }
  return sortKeys(out) as ExamplesFile;
}

// The two values that depend on when the capture runs, not on the fixtures: random access tokens, and the
// clock's offset from the real clock (shown as if the real clock read the emulated time).
function normalize(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return /^sbx_at_[A-Za-z0-9_-]+$/.test(value) ? TOKEN_EXAMPLE : value;
  if (key === 'offsetMs' && typeof value === 'number') return 0;
  if (Array.isArray(value)) return value.map((item) => normalize(item));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, normalize(item, name)]));
  return value;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys((value as Json)[key])]));
  }
  return value;
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

// A one-page PDF written by hand (the smallest document the upload check reads as a valid PDF).
function tinyPdf(): string {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(body.length);
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1').toString('base64');
}

type Later = (answers: Map<string, Json>) => Step | undefined;

/**
 * The examples of a /v1 operation journey() does not name (docs/architecture.md#a-new-v1-route): its error example is
 * the call without credentials (401); its success example the call as the document describes it, signed with the
 * SINGLE_USER key: path and required query parameters from their examples, the body from its schema's `examples`
 * (`.meta({ examples: [...] })` on the body schema). An operation that needs more (an id another call makes, the
 * MULTI_USER key, a body without an example) needs its own steps in journey(): the error says so.
 */
function defaultSteps(document: Json, named: Set<string>): Step[] {
  const steps: Step[] = [];
  const resolve = (value: Json): Json => (typeof value?.$ref === 'string' ? resolve(value.$ref.split('/').slice(1).reduce((at: Json, key: string) => at[key], document)) : value);
  for (const [route, item] of Object.entries(document.paths as Json)) {
    if (!route.startsWith('/v1/')) continue;
    for (const [method, operation] of Object.entries(item as Json) as Array<[string, Json]>) {
      if (!operation.operationId || named.has(operation.operationId)) continue;
      const where = `${method.toUpperCase()} ${route} (${operation.operationId})`;
      const fix = `add its success and error steps to journey() in scripts/openapi-examples.ts`;
      const parameters = ((operation.parameters ?? []) as Json[]).map(resolve);
      const example = (parameter: Json) => parameter.example ?? parameter.schema?.examples?.[0] ?? parameter.schema?.default ?? parameter.schema?.enum?.[0];
      let url = route;
      for (const parameter of parameters.filter((p) => p.in === 'path')) {
        if (example(parameter) === undefined) throw new Error(`${where}: path parameter ${parameter.name} has no example: ${fix}`);
        url = url.replace(`{${parameter.name}}`, encodeURIComponent(String(example(parameter))));
      }
      const query = parameters.filter((p) => p.in === 'query' && p.required).map((p) => {
        if (example(p) === undefined) throw new Error(`${where}: query parameter ${p.name} has no example: give its zod schema .meta({ examples: [...] }), or ${fix}`);
        return `${encodeURIComponent(p.name)}=${encodeURIComponent(String(example(p)))}`;
      });
      if (query.length) url += `?${query.join('&')}`;
      const media = operation.requestBody?.content?.['application/json'];
      const bodySchema = media ? resolve(media.schema) : undefined;
      const body = bodySchema?.examples?.[0] ?? media?.example;
      if (media && body === undefined && operation.requestBody.required) {
        throw new Error(`${where}: its body schema has no example: give it .meta({ examples: [{ ... }] }), or ${fix}`);
      }
      const success = Object.keys(operation.responses ?? {}).find((status) => /^2\d\d$/.test(status));
      if (!success) throw new Error(`${where}: no 2xx response in its schema`);
      const httpMethod = method.toUpperCase() as Step['method'];
      steps.push({ operationId: operation.operationId, name: 'success', summary: operation.summary ?? 'Success', method: httpMethod, url, body, expect: Number(success), requestExample: body !== undefined });
      steps.push({ operationId: operation.operationId, name: 'noCredentials', summary: 'No credentials', method: httpMethod, url, body, as: 'none', expect: 401 });
    }
  }
  return steps;
}

/** The journey, in order: each /v1 operation's success and its main errors. */
function journey(): Array<Step | Later> {
  const asAda = (answers: Map<string, Json>) => ({ ...MULTI, userId: answers.get('createUser/created')!.userId as string });
  const jane = { ...MULTI, userId: 'usr_jane' };
  const address = { line1: '500 Market Street', city: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' };
  const payout = { entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '250.00', currency: 'USD', reference: 'INV-1001' };
  const intentBody = {
    idempotencyKey: 'intent-2026-03-01-0001',
    debitAccountId: 'acct_acme_usd',
    credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' },
    debitAmount: '100.00',
    purpose: 'PAYMENT_FOR_SERVICES',
    debitMemo: 'March services',
  };
  return [
    // Auth and users
    { operationId: 'createAccessToken', name: 'issued', summary: 'A token for two scopes', method: 'POST', url: '/v1/auth/token', body: { scopes: ['accounts:read', 'transactions:read'] }, expect: 200, requestExample: true },
    { operationId: 'createAccessToken', name: 'unknownScope', summary: 'An unknown scope', method: 'POST', url: '/v1/auth/token', body: { scopes: ['accounts:delete'] }, expect: 400 },
    { operationId: 'createAccessToken', name: 'badSignature', summary: 'A signature that does not match', method: 'POST', url: '/v1/auth/token', as: { ...SINGLE, secret: 'not-the-secret' }, expect: 401 },
    { operationId: 'createUser', name: 'created', summary: 'A PERSON user of the programme', method: 'POST', url: '/v1/auth/users', body: { externalId: 'crm-00042', type: 'PERSON', name: 'Ada Lovelace', email: 'ada@example.com' }, as: MULTI, expect: 201, requestExample: true },
    { operationId: 'createUser', name: 'existing', summary: 'The same externalId again: the existing user', method: 'POST', url: '/v1/auth/users', body: { externalId: 'crm-00042', type: 'PERSON', name: 'Ada Lovelace' }, as: MULTI, expect: 200 },
    { operationId: 'createUser', name: 'missingType', summary: 'type is missing', method: 'POST', url: '/v1/auth/users', body: { externalId: 'crm-00043', name: 'Grace Hopper' }, as: MULTI, expect: 400 },
    { operationId: 'listUsers', name: 'page', summary: 'The first two users', method: 'GET', url: '/v1/users?pageSize=2', as: MULTI, expect: 200 },
    { operationId: 'listUsers', name: 'badPageSize', summary: 'pageSize out of range', method: 'GET', url: '/v1/users?pageSize=0', as: MULTI, expect: 400 },
    // Enrollment and information requests (the new user)
    (a) => ({ operationId: 'getEnrollment', name: 'started', summary: 'Created on the first call, with its information request', method: 'GET', url: '/v1/enrollment', as: asAda(a), expect: 200 }),
    { operationId: 'getEnrollment', name: 'userHeaderMissing', summary: 'A MULTI_USER key without X-Service-User-Id', method: 'GET', url: '/v1/enrollment', as: MULTI, expect: 400 },
    (a) => ({ operationId: 'activateEnrollment', name: 'resumed', summary: 'Activate: the enrollment in progress', method: 'POST', url: '/v1/enrollment/activate', as: asAda(a), expect: 200 }),
    (a) => ({
      operationId: 'activateEnrollment',
      name: 'missingScope',
      summary: 'A bearer token without the enrollment:write scope',
      method: 'POST',
      url: '/v1/enrollment/activate',
      as: { bearer: a.get('createAccessToken/issued')!.accessToken as string },
      expect: 403,
    }),
    (a) => ({ operationId: 'listInformationRequests', name: 'open', summary: 'The open information request', method: 'GET', url: '/v1/information-requests', as: asAda(a), expect: 200 }),
    { operationId: 'listInformationRequests', name: 'userHeaderMissing', summary: 'A MULTI_USER key without X-Service-User-Id', method: 'GET', url: '/v1/information-requests', as: MULTI, expect: 400 },
    (a) => ({
      operationId: 'getInformationRequest',
      name: 'detail',
      summary: 'Requirements and entries',
      method: 'GET',
      url: `/v1/information-requests/${a.get('getEnrollment/started')!.informationRequest.id}`,
      as: asAda(a),
      expect: 200,
    }),
    (a) => ({ operationId: 'getInformationRequest', name: 'notFound', summary: 'An unknown id', method: 'GET', url: '/v1/information-requests/ir_unknown', as: asAda(a), expect: 404 }),
    (a) => ({
      operationId: 'submitInformationRequest',
      name: 'incomplete',
      summary: 'Submitted before every required entry is written',
      method: 'POST',
      url: `/v1/information-requests/${a.get('getEnrollment/started')!.informationRequest.id}/submit`,
      as: asAda(a),
      expect: 400,
    }),
    (a) => ({
      operationId: 'writeInformationRequestEntries',
      name: 'invalidEntry',
      summary: 'A key the request does not have: nothing is written',
      method: 'POST',
      url: `/v1/information-requests/${a.get('getEnrollment/started')!.informationRequest.id}/entries`,
      body: { entries: [{ key: 'legalName', value: 'Ada Lovelace' }, { key: 'favouriteColour', value: 'blue' }] },
      as: asAda(a),
      expect: 400,
    }),
    (a) => ({
      operationId: 'writeInformationRequestEntries',
      name: 'written',
      summary: 'Every entry of a person',
      method: 'POST',
      url: `/v1/information-requests/${a.get('getEnrollment/started')!.informationRequest.id}/entries`,
      body: {
        entries: [
          { key: 'legalName', value: 'Ada Lovelace' },
          { key: 'dateOfBirth', value: '1990-05-17' },
          { key: 'address', value: address },
          { key: 'taxId', value: { country: 'US', number: '123-45-6789' } },
          { key: 'identityDocument', value: { fileName: 'passport.pdf', contentType: 'application/pdf', contentBase64: tinyPdf() } },
        ],
      },
      as: asAda(a),
      expect: 200,
      requestExample: true,
    }),
    (a) => ({
      operationId: 'submitInformationRequest',
      name: 'submitted',
      summary: 'Submitted for review',
      method: 'POST',
      url: `/v1/information-requests/${a.get('getEnrollment/started')!.informationRequest.id}/submit`,
      as: asAda(a),
      expect: 200,
    }),
    // Accounts, deposit instructions, statements
    { operationId: 'listAccounts', name: 'page', summary: 'The first two accounts', method: 'GET', url: '/v1/accounts?pageSize=2', expect: 200 },
    { operationId: 'listAccounts', name: 'badPageSize', summary: 'pageSize out of range', method: 'GET', url: '/v1/accounts?pageSize=500', expect: 400 },
    { operationId: 'listAccounts', name: 'noCredentials', summary: 'No credentials', method: 'GET', url: '/v1/accounts', as: 'none', expect: 401 },
    { operationId: 'getAccount', name: 'account', summary: 'An account with its deposit instructions and balances', method: 'GET', url: '/v1/accounts/acct_acme_usd', expect: 200 },
    { operationId: 'getAccount', name: 'notFound', summary: 'An unknown id (or another user\'s)', method: 'GET', url: '/v1/accounts/acct_unknown', expect: 404 },
    { operationId: 'createDepositInstruction', name: 'accepted', summary: 'A new instruction, provisioned asynchronously', method: 'POST', url: '/v1/accounts/acct_acme_usd/deposit-instructions', body: { name: 'Invoices March', idempotencyKey: 'di-2026-03-0001' }, expect: 202, requestExample: true },
    { operationId: 'createDepositInstruction', name: 'notFound', summary: 'An unknown account', method: 'POST', url: '/v1/accounts/acct_unknown/deposit-instructions', body: { name: 'Invoices March', idempotencyKey: 'di-2026-03-0002' }, expect: 404 },
    { operationId: 'getAccountStatement', name: 'json', summary: 'format json: the statement inline', method: 'GET', url: '/v1/accounts/acct_acme_usd/statement?startDate=2026-02-01&endDate=2026-02-28', expect: 200 },
    { operationId: 'getAccountStatement', name: 'csv', summary: 'format csv (or pdf): a signed link to the file', method: 'GET', url: '/v1/accounts/acct_acme_usd/statement?startDate=2026-02-01&endDate=2026-02-28&format=csv', expect: 200 },
    { operationId: 'getAccountStatement', name: 'tooEarly', summary: 'A period before 2026-01-01', method: 'GET', url: '/v1/accounts/acct_acme_usd/statement?startDate=2025-12-01&endDate=2026-01-31', expect: 400 },
    { operationId: 'downloadStatementFile', name: 'tampered', summary: 'A link whose signature does not match', method: 'GET', url: '/v1/statement-files/stf_unknown?expires=1772366400000&signature=00', as: 'none', expect: 403 },
    // Money in
    { operationId: 'simulateDeposit', name: 'accepted', summary: 'A deposit through an ACH instruction', method: 'POST', url: '/v1/sandbox/accounts/acct_acme_usd/deposits', body: { depositInstructionId: 'di_acme_usd_ach', amount: '1250.00', reference: 'INV-2026-031', counterpartyName: 'Globex, Inc.' }, expect: 202, requestExample: true },
    { operationId: 'simulateDeposit', name: 'unknownInstruction', summary: 'An instruction that does not exist', method: 'POST', url: '/v1/sandbox/accounts/acct_acme_usd/deposits', body: { depositInstructionId: 'di_unknown', amount: '1250.00' }, expect: 404 },
    { operationId: 'emulatorSetClock', name: 'advanced', summary: 'Advance the emulated clock one hour: the deposit settles', method: 'POST', url: '/_emulator/clock', body: { advanceMs: 3_600_000 }, as: 'none', expect: 200, requestExample: true },
    { operationId: 'emulatorGetClock', name: 'clock', summary: 'The emulated clock', method: 'GET', url: '/_emulator/clock', as: 'none', expect: 200 },
    { operationId: 'listTransactions', name: 'page', summary: 'Newest first, two per page', method: 'GET', url: '/v1/transactions?pageSize=2', expect: 200 },
    { operationId: 'listTransactions', name: 'badSort', summary: 'A sortBy outside the accepted set', method: 'GET', url: '/v1/transactions?sortBy=AMOUNT', expect: 400 },
    // a transaction of the default fixtures, so the document's path example exists on a fresh server (docs/openapi.md#parameter-examples)
    { operationId: 'getTransaction', name: 'withdrawal', summary: 'A completed withdrawal of the fixtures\' history', method: 'GET', url: '/v1/transactions/txn_hist_acme_usd_003', expect: 200 },
    { operationId: 'getTransaction', name: 'notFound', summary: 'An unknown id', method: 'GET', url: '/v1/transactions/txn_unknown', expect: 404 },
    // Money out
    {
      operationId: 'createBeneficiary',
      name: 'created',
      summary: 'A business with one US bank account',
      method: 'POST',
      url: '/v1/beneficiaries',
      body: {
        type: 'BUSINESS',
        businessName: 'Initrode Supplies LLC',
        email: 'ap@initrode.example',
        address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
        instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Initrode Supplies LLC', accountNumber: '987654321012', routingNumber: '021000021' }],
      },
      expect: 201,
      requestExample: true,
    },
    { operationId: 'createBeneficiary', name: 'noInstrument', summary: 'No instrument', method: 'POST', url: '/v1/beneficiaries', body: { type: 'BUSINESS', businessName: 'Initrode Supplies LLC', instruments: [] }, expect: 400 },
    { operationId: 'listBeneficiaries', name: 'page', summary: 'The first two beneficiaries', method: 'GET', url: '/v1/beneficiaries?pageSize=2', expect: 200 },
    { operationId: 'listBeneficiaries', name: 'badPageSize', summary: 'pageSize out of range', method: 'GET', url: '/v1/beneficiaries?pageSize=0', expect: 400 },
    { operationId: 'getBeneficiary', name: 'beneficiary', summary: 'A fixture beneficiary', method: 'GET', url: '/v1/beneficiaries/ben_globex', expect: 200 },
    { operationId: 'getBeneficiary', name: 'notFound', summary: 'An unknown id', method: 'GET', url: '/v1/beneficiaries/ben_unknown', expect: 404 },
    { operationId: 'listBeneficiaryInstruments', name: 'instruments', summary: 'Its instruments', method: 'GET', url: '/v1/beneficiaries/ben_globex/instruments', expect: 200 },
    { operationId: 'listBeneficiaryInstruments', name: 'notFound', summary: 'An unknown beneficiary', method: 'GET', url: '/v1/beneficiaries/ben_unknown/instruments', expect: 404 },
    { operationId: 'createTransactionIntent', name: 'created', summary: 'A priced preview: USD to the EUR account', method: 'POST', url: '/v1/transaction-intents', body: intentBody, expect: 201, requestExample: true },
    // the same key and body again: the first answer replayed, as a 200 (docs/money-out.md#transaction-intents)
    { operationId: 'createTransactionIntent', name: 'replayed', summary: 'The same idempotencyKey and body again: the intent as first created', method: 'POST', url: '/v1/transaction-intents', body: intentBody, expect: 200 },
    { operationId: 'createTransactionIntent', name: 'missingAmount', summary: 'Neither debitAmount nor creditAmount', method: 'POST', url: '/v1/transaction-intents', body: { ...intentBody, idempotencyKey: 'intent-2026-03-01-0002', debitAmount: undefined }, expect: 400 },
    { operationId: 'listTransactionIntents', name: 'page', summary: 'The caller\'s intents', method: 'GET', url: '/v1/transaction-intents?pageSize=2', expect: 200 },
    { operationId: 'listTransactionIntents', name: 'badPageSize', summary: 'pageSize out of range', method: 'GET', url: '/v1/transaction-intents?pageSize=0', expect: 400 },
    (a) => ({ operationId: 'getTransactionIntent', name: 'intent', summary: 'The intent just created', method: 'GET', url: `/v1/transaction-intents/${a.get('createTransactionIntent/created')!.id}`, expect: 200 }),
    { operationId: 'getTransactionIntent', name: 'notFound', summary: 'An unknown id', method: 'GET', url: '/v1/transaction-intents/ti_unknown', expect: 404 },
    (a) => ({
      operationId: 'commitTransactionIntent',
      name: 'committed',
      summary: 'Commit: the transfer is created',
      method: 'POST',
      url: `/v1/transaction-intents/${a.get('createTransactionIntent/created')!.id}/commit`,
      body: { idempotencyKey: 'intent-2026-03-01-0001' },
      expect: 200,
      requestExample: true,
    }),
    (a) => ({
      operationId: 'cancelTransactionIntent',
      name: 'alreadyCommitted',
      summary: 'A committed intent cannot be canceled',
      method: 'POST',
      url: `/v1/transaction-intents/${a.get('createTransactionIntent/created')!.id}/cancel`,
      expect: 409,
    }),
    { operationId: 'createTransactionIntent', name: 'second', summary: 'Another preview', method: 'POST', url: '/v1/transaction-intents', body: { ...intentBody, idempotencyKey: 'intent-2026-03-01-0003' }, expect: 201 },
    (a) => ({ operationId: 'cancelTransactionIntent', name: 'canceled', summary: 'Cancel a CREATED intent', method: 'POST', url: `/v1/transaction-intents/${a.get('createTransactionIntent/second')!.id}/cancel`, expect: 200 }),
    (a) => ({
      operationId: 'commitTransactionIntent',
      name: 'canceled',
      summary: 'A canceled intent cannot be committed',
      method: 'POST',
      url: `/v1/transaction-intents/${a.get('createTransactionIntent/second')!.id}/commit`,
      body: { idempotencyKey: 'intent-2026-03-01-0003' },
      expect: 409,
    }),
    { operationId: 'submitPayout', name: 'json', summary: 'Base64 of a json payload', method: 'POST', url: '/v1/payout-origination/json', body: base64(JSON.stringify(payout)), payout: { idempotencyKey: 'payout-2026-03-01-0001' }, expect: 202, requestExample: true },
    { operationId: 'submitPayout', name: 'missingReference', summary: 'A json payload without reference', method: 'POST', url: '/v1/payout-origination/json', body: base64(JSON.stringify({ ...payout, reference: undefined })), payout: { idempotencyKey: 'payout-2026-03-01-0002' }, expect: 400 },
    { operationId: 'submitPayout', name: 'person', summary: 'A PERSON user cannot submit payouts', method: 'POST', url: '/v1/payout-origination/json', body: base64(JSON.stringify({ ...payout, entityId: 'acct_jane_usd' })), payout: { idempotencyKey: 'payout-2026-03-01-0003' }, as: jane, expect: 403 },
  ];
}
