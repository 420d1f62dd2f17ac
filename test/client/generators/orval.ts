// orval (fetch client, a mutator: ./orval-fetch.ts) (docs/openapi.md#orval): each call answers
// { data, status, headers }, narrowed by status.
import { commitTransactionIntent, createBeneficiary, createTransactionIntent, downloadStatementFile, getAccountStatement, listTransactions, submitPayout } from './generated/api.js';
import { fail, main } from './common.js';

main({
  async listTransactions(pageIndex, pageSize) {
    const answer = await listTransactions({ pageIndex, pageSize, sortBy: 'CREATED_AT', sortDirection: 'DESC' });
    if (answer.status !== 200) fail(`listTransactions: ${JSON.stringify(answer.data)}`);
    return { pageSize: answer.data.pageSize, rows: answer.data.data.length };
  },
  async createBeneficiary(name) {
    const answer = await createBeneficiary({
      type: 'BUSINESS',
      businessName: name,
      email: 'ap@initrode.example',
      address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
      instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: name, accountNumber: '987654321012', routingNumber: '021000021' }],
    });
    if (answer.status !== 201) fail(`createBeneficiary: ${JSON.stringify(answer.data)}`);
    return answer.data.id;
  },
  async createIntent(idempotencyKey) {
    const answer = await createTransactionIntent({
      idempotencyKey,
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' },
      debitAmount: '10.00',
      purpose: 'PAYMENT_FOR_SERVICES',
    });
    if (answer.status !== 201) fail(`createTransactionIntent: ${JSON.stringify(answer.data)}`);
    return answer.data.id;
  },
  async commitIntent(id, idempotencyKey) {
    const answer = await commitTransactionIntent(id, { idempotencyKey });
    if (answer.status !== 200) fail(`commitTransactionIntent: ${JSON.stringify(answer.data)}`);
    return answer.data.status;
  },
  async payout(payload, headers) {
    const answer = await submitPayout('json', payload, headers);
    if (answer.status !== 202) fail(`submitPayout: ${JSON.stringify(answer.data)}`);
    return { status: answer.data.status, transactionId: answer.data.transactionId };
  },
  async statementLink(startDate, endDate) {
    const answer = await getAccountStatement('acct_acme_usd', { startDate, endDate, format: 'pdf' });
    if (answer.status !== 200 || !('url' in answer.data)) fail(`getAccountStatement: ${JSON.stringify(answer.data)}`);
    return answer.data.url;
  },
  async statementFile(fileId, expires, signature) {
    const answer = await downloadStatementFile(fileId, { expires, signature });
    if (answer.status !== 200) fail(`downloadStatementFile: ${JSON.stringify(answer.data)}`);
    return new Uint8Array(await answer.data.arrayBuffer());
  },
});
