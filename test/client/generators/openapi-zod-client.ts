// openapi-zod-client (Zodios on axios) (docs/openapi.md#openapi-zod-client): the signing hook is an axios
// request interceptor on the instance the client is given; it sends the body as the exact string it signs.
// A statement file comes back as a File (axios's fetch adapter reads a Blob; the response interceptor names it
// from Content-Disposition), which is what the generated z.instanceof(File) checks.
import axios from 'axios';
import { createApiClient } from './generated/api.js';
import { baseUrl, fail, main, signedHeaders } from './common.js';

const instance = axios.create({ adapter: 'fetch' });
instance.interceptors.request.use((config) => {
  if (config.data !== undefined && typeof config.data !== 'string') {
    config.data = JSON.stringify(config.data);
    config.headers.set('Content-Type', 'application/json', false);
  }
  const url = new URL(instance.getUri(config));
  const body: string = typeof config.data === 'string' ? config.data : '';
  for (const [name, value] of Object.entries(signedHeaders(config.method?.toUpperCase() ?? 'GET', `${url.pathname}${url.search}`, body))) config.headers.set(name, value);
  return config;
});
instance.interceptors.response.use((response) => {
  if (response.data instanceof Blob && !(response.data instanceof File)) {
    const name = /filename="?([^";]+)/.exec(String(response.headers['content-disposition'] ?? ''))?.[1] ?? 'statement';
    response.data = new File([response.data], name, { type: response.data.type });
  }
  return response;
});
const api = createApiClient(baseUrl, { axiosInstance: instance });

main({
  async listTransactions(pageIndex, pageSize) {
    const page = await api.listTransactions({ queries: { pageIndex, pageSize, sortBy: 'CREATED_AT', sortDirection: 'DESC' } });
    return { pageSize: page.pageSize, rows: page.data.length };
  },
  async createBeneficiary(name) {
    const beneficiary = await api.createBeneficiary({
      type: 'BUSINESS',
      businessName: name,
      email: 'ap@initrode.example',
      address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
      instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: name, accountNumber: '987654321012', routingNumber: '021000021' }],
    });
    return beneficiary.id;
  },
  async createIntent(idempotencyKey) {
    const intent = await api.createTransactionIntent({
      idempotencyKey,
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' },
      debitAmount: '10.00',
      purpose: 'PAYMENT_FOR_SERVICES',
    });
    return intent.id;
  },
  async commitIntent(id, idempotencyKey) {
    const intent = await api.commitTransactionIntent({ idempotencyKey }, { params: { transactionIntentId: id } });
    return intent.status;
  },
  async payout(payload, headers) {
    const accepted = await api.submitPayout(payload, { params: { format: 'json' }, headers });
    return { status: accepted.status, transactionId: accepted.transactionId };
  },
  async statementLink(startDate, endDate) {
    const statement = await api.getAccountStatement({ params: { accountId: 'acct_acme_usd' }, queries: { startDate, endDate, format: 'pdf' } });
    if (!('url' in statement)) fail(`getAccountStatement answered a statement, not a link: ${JSON.stringify(statement)}`);
    return statement.url;
  },
  async statementFile(fileId, expires, signature) {
    const file = await api.downloadStatementFile({ params: { fileId }, queries: { expires, signature }, responseType: 'blob' });
    return new Uint8Array(await file.arrayBuffer());
  },
});
