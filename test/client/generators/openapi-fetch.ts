// openapi-typescript + openapi-fetch (docs/openapi.md#openapi-typescript--openapi-fetch): the signing hook is a
// middleware whose onRequest signs the Request the client built.
import createClient from 'openapi-fetch';
import type { paths } from './generated/schema.js';
import { baseUrl, fail, main, signFetchRequest } from './common.js';

const client = createClient<paths>({ baseUrl });
client.use({ onRequest: ({ request }) => signFetchRequest(request) });

main({
  async listTransactions(pageIndex, pageSize) {
    const { data, error } = await client.GET('/v1/transactions', { params: { query: { pageIndex, pageSize, sortBy: 'CREATED_AT', sortDirection: 'DESC' } } });
    if (!data) fail(`listTransactions: ${JSON.stringify(error)}`);
    return { pageSize: data.pageSize, rows: data.data.length };
  },
  async createBeneficiary(name) {
    const { data, error } = await client.POST('/v1/beneficiaries', {
      body: {
        type: 'BUSINESS',
        businessName: name,
        email: 'ap@initrode.example',
        address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
        instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: name, accountNumber: '987654321012', routingNumber: '021000021' }],
      },
    });
    return data?.id ?? fail(`createBeneficiary: ${JSON.stringify(error)}`);
  },
  async createIntent(idempotencyKey) {
    const { data, error } = await client.POST('/v1/transaction-intents', {
      body: { idempotencyKey, debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, debitAmount: '10.00', purpose: 'PAYMENT_FOR_SERVICES' },
    });
    return data?.id ?? fail(`createTransactionIntent: ${JSON.stringify(error)}`);
  },
  async commitIntent(id, idempotencyKey) {
    const { data, error } = await client.POST('/v1/transaction-intents/{transactionIntentId}/commit', { params: { path: { transactionIntentId: id } }, body: { idempotencyKey } });
    return data?.status ?? fail(`commitTransactionIntent: ${JSON.stringify(error)}`);
  },
  async payout(payload, headers) {
    const { data, error } = await client.POST('/v1/payout-origination/{format}', {
      params: { path: { format: 'json' }, header: headers },
      headers: { 'Content-Type': 'text/plain' },
      body: payload,
      bodySerializer: (body) => body,
    });
    if (!data) fail(`submitPayout: ${JSON.stringify(error)}`);
    return { status: data.status, transactionId: data.transactionId };
  },
  async statementLink(startDate, endDate) {
    const { data, error } = await client.GET('/v1/accounts/{accountId}/statement', { params: { path: { accountId: 'acct_acme_usd' }, query: { startDate, endDate, format: 'pdf' } } });
    if (!data || !('url' in data)) fail(`getAccountStatement: ${JSON.stringify(data ?? error)}`);
    return data.url;
  },
  async statementFile(fileId, expires, signature) {
    const { data, error } = await client.GET('/v1/statement-files/{fileId}', { params: { path: { fileId }, query: { expires, signature } }, parseAs: 'blob' });
    if (!data) fail(`downloadStatementFile: ${JSON.stringify(error)}`);
    return new Uint8Array(await data.arrayBuffer());
  },
});
