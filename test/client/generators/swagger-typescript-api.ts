// swagger-typescript-api (docs/openapi.md#swagger-typescript-api): the signing hook is the `customFetch`
// the generated HttpClient accepts; a file is read with `format: 'blob'`.
import { Api } from './generated/api.js';
import { baseUrl, fail, main, signedFetch } from './common.js';

const api = new Api({ baseUrl, customFetch: signedFetch });

main({
  async listTransactions(pageIndex, pageSize) {
    const { data } = await api.v1.listTransactions({ pageIndex, pageSize, sortBy: 'CREATED_AT', sortDirection: 'DESC' });
    return { pageSize: data.pageSize, rows: data.data.length };
  },
  async createBeneficiary(name) {
    const { data } = await api.v1.createBeneficiary({
      type: 'BUSINESS',
      businessName: name,
      email: 'ap@initrode.example',
      address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
      instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: name, accountNumber: '987654321012', routingNumber: '021000021' }],
    });
    return data.id;
  },
  async createIntent(idempotencyKey) {
    const { data } = await api.v1.createTransactionIntent({
      idempotencyKey,
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' },
      debitAmount: '10.00',
      purpose: 'PAYMENT_FOR_SERVICES',
    });
    return data.id;
  },
  async commitIntent(id, idempotencyKey) {
    const { data } = await api.v1.commitTransactionIntent(id, { idempotencyKey });
    return data.status;
  },
  async payout(payload, headers) {
    const { data } = await api.v1.submitPayout('json', payload, { headers });
    return { status: data.status, transactionId: data.transactionId };
  },
  async statementLink(startDate, endDate) {
    const { data } = await api.v1.getAccountStatement('acct_acme_usd', { startDate, endDate, format: 'pdf' });
    if (!('url' in data)) fail(`getAccountStatement answered a statement, not a link: ${JSON.stringify(data)}`);
    return data.url;
  },
  async statementFile(fileId, expires, signature) {
    const { data } = await api.v1.downloadStatementFile(fileId, { expires, signature }, { format: 'blob' });
    return new Uint8Array(await data.arrayBuffer());
  },
});
