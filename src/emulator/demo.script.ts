import type { Timeline } from '../fixtures/fixtures.schema.js';

// The guided demo (docs/dashboard.md#run-a-demo), as data: each step has a caption the page shows and an action run
// against the sandbox the step is called on. Actions call the public API through real signed requests (the act-as
// proxy: same validation, auth, idempotency and request journal as any client) and move the emulated clock, so what
// the presenter sees is what a client of the API would get. Every amount and name is fixed, and ids come from the
// sandbox's seeded sequence, so a fresh session runs the same demo with the same ids every time.

/** What earlier steps found out, for later steps (kept with the progress, docs/dashboard.md#run-a-demo). */
export interface DemoRefs {
  userId?: string;
  informationRequestId?: string;
  usdAccountId?: string;
  achInstructionId?: string;
  beneficiaryId?: string;
  instrumentId?: string;
  depositId?: string;
  payoutId?: string;
  failedPayoutId?: string;
  mistakenDepositId?: string;
  refundId?: string;
}

export interface DemoOutcome {
  /** One line: what the step did, with the ids it made. */
  summary: string;
  /** The transaction the step made or moved, for the page to open its story. */
  transactionId?: string;
}

export interface ApiAnswer {
  status: number;
  body: any;
}

/** What an action may use. Each call throws DemoStepError when the answer's status is not an expected one. */
export interface DemoTools {
  refs: DemoRefs;
  timeline: Timeline;
  /** A programme-level call with the programme's MULTI_USER key (no user). */
  asProgramme(method: 'GET' | 'POST', path: string, body: unknown, expect: number[]): Promise<ApiAnswer>;
  /** A call as the demo's user; `text` sends a payout's Base64 body with its Idempotency-Key. */
  asUser(method: 'GET' | 'POST', path: string, body: unknown, expect: number[], idempotencyKey?: string): Promise<ApiAnswer>;
  /** Freeze the clock at the next whole second: from now on only the demo's steps move time. */
  freezeClock(): void;
  /** Advance the emulated clock, running every job due on the way. */
  advance(ms: number): void;
}

export class DemoStepError extends Error {}

export interface DemoStep {
  id: string;
  caption: string;
  run(tools: DemoTools): Promise<DemoOutcome>;
}

export const DEMO_BUSINESS = { externalId: 'demo-northwind-traders', name: 'Northwind Traders Inc', email: 'finance@northwind.example' };
export const DEMO_SUPPLIER = 'Initech LLC';
export const DEMO_AMOUNTS = { deposit: '5000.00', payout: '1250.00', failedPayout: '300.91', mistakenDeposit: '250.00' } as const;

// A one-page PDF (the one docs/onboarding.md's walkthrough uses): the certificate of incorporation the business uploads.
const CERTIFICATE_PDF =
  'JVBERi0xLjQKMSAwIG9iago8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFszIDAgUl0gL0NvdW50IDEgPj4KZW5kb2JqCjMgMCBvYmoKPDwgL1R5cGUgL1BhZ2UgL1BhcmVudCAyIDAgUiAvTWVkaWFCb3ggWzAgMCA2MTIgNzkyXSAvQ29udGVudHMgNCAwIFIgL1Jlc291cmNlcyA8PCAvRm9udCA8PCAvRjEgNSAwIFIgPj4gPj4gPj4KZW5kb2JqCjQgMCBvYmoKPDwgL0xlbmd0aCA1MiA+PgpzdHJlYW0KQlQgL0YxIDE4IFRmIDcyIDcyMCBUZCAoU2FuZGJveCB0ZXN0IGRvY3VtZW50KSBUaiBFVAplbmRzdHJlYW0KZW5kb2JqCjUgMCBvYmoKPDwgL1R5cGUgL0ZvbnQgL1N1YnR5cGUgL1R5cGUxIC9CYXNlRm9udCAvSGVsdmV0aWNhID4+CmVuZG9iagp4cmVmCjAgNgowMDAwMDAwMDAwIDY1NTM1IGYgCjAwMDAwMDAwMDkgMDAwMDAgbiAKMDAwMDAwMDA1OCAwMDAwMCBuIAowMDAwMDAwMTE1IDAwMDAwIG4gCjAwMDAwMDAyNDEgMDAwMDAgbiAKMDAwMDAwMDM0MyAwMDAwMCBuIAp0cmFpbGVyCjw8IC9TaXplIDYgL1Jvb3QgMSAwIFIgPj4Kc3RhcnR4cmVmCjQxMwolJUVPRgo=';

const ADDRESS = { line1: '410 Terry Avenue', city: 'Seattle', region: 'WA', postalCode: '98109', country: 'US' };

/** The pacs.008 (ISO 20022, version 08) that pays the supplier: debtor account by id, creditor by beneficiary id. */
export function supplierPacs008(accountId: string, beneficiaryId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">
  <FIToFICstmrCdtTrf>
    <GrpHdr>
      <MsgId>NORTHWIND-PACS008-0001</MsgId>
      <CreDtTm>2026-03-01T12:00:00Z</CreDtTm>
      <NbOfTxs>1</NbOfTxs>
      <SttlmInf><SttlmMtd>CLRG</SttlmMtd></SttlmInf>
    </GrpHdr>
    <CdtTrfTxInf>
      <PmtId><InstrId>NW-INSTR-0001</InstrId><EndToEndId>NW-E2E-0001</EndToEndId></PmtId>
      <IntrBkSttlmAmt Ccy="USD">${DEMO_AMOUNTS.payout}</IntrBkSttlmAmt>
      <ChrgBr>DEBT</ChrgBr>
      <Dbtr><Nm>${DEMO_BUSINESS.name}</Nm></Dbtr>
      <DbtrAcct><Id><Othr><Id>${accountId}</Id></Othr></Id></DbtrAcct>
      <Cdtr><Nm>${DEMO_SUPPLIER}</Nm><Id><OrgId><Othr><Id>${beneficiaryId}</Id></Othr></OrgId></Id></Cdtr>
      <RmtInf><Ustrd>Invoice INI-2026-0042</Ustrd></RmtInf>
    </CdtTrfTxInf>
  </FIToFICstmrCdtTrf>
</Document>
`;
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new DemoStepError(`The demo lost track of ${what}; reset the sandbox (POST /_emulator/reset) and start again`);
  return value;
}

const TXN_IN_MESSAGE = /txn_[A-Za-z0-9]+/;

export const DEMO_STEPS: readonly DemoStep[] = [
  {
    id: 'sign-up',
    caption: 'Northwind Traders signs up: a new business user, not enrolled yet',
    async run(tools) {
      tools.freezeClock();
      const created = await tools.asProgramme('POST', '/v1/auth/users', { externalId: DEMO_BUSINESS.externalId, type: 'BUSINESS', name: DEMO_BUSINESS.name, email: DEMO_BUSINESS.email }, [201]);
      tools.refs.userId = created.body.userId as string;
      return { summary: `User ${tools.refs.userId} created (BUSINESS, enrollment INACTIVE); the clock is frozen so that only the demo moves it` };
    },
  },
  {
    id: 'enrollment',
    caption: 'Its enrollment starts: an information request (DRAFT) lists what the business must provide',
    async run(tools) {
      const enrollment = await tools.asUser('GET', '/v1/enrollment', undefined, [200]);
      tools.refs.informationRequestId = enrollment.body.informationRequest.id as string;
      return { summary: `Enrollment ${enrollment.body.id} INACTIVE with information request ${tools.refs.informationRequestId} (DRAFT)` };
    },
  },
  {
    id: 'details',
    caption: 'Northwind fills in its details: name, registration, address, two owners and its certificate of incorporation (PDF)',
    async run(tools) {
      const id = need(tools.refs.informationRequestId, 'the information request');
      const written = await tools.asUser(
        'POST',
        `/v1/information-requests/${id}/entries`,
        {
          entries: [
            { key: 'businessName', value: DEMO_BUSINESS.name },
            { key: 'registrationNumber', value: 'C-7310482' },
            { key: 'incorporationCountry', value: 'US' },
            { key: 'address', value: ADDRESS },
            {
              key: 'beneficialOwners',
              value: [
                { name: 'Nancy Davolio', dateOfBirth: '1978-12-08', ownershipPercent: 55 },
                { name: 'Andrew Fuller', dateOfBirth: '1972-02-19', ownershipPercent: 45 },
              ],
            },
            { key: 'formationDocument', value: { fileName: 'certificate-of-incorporation.pdf', contentType: 'application/pdf', contentBase64: CERTIFICATE_PDF } },
          ],
        },
        [200],
      );
      if (written.body.validationStatus !== 'VALID') throw new DemoStepError(`The information request is ${written.body.validationStatus} after the entries, not VALID`);
      return { summary: `Information request ${id}: every requirement VALID` };
    },
  },
  {
    id: 'submit',
    caption: 'Northwind submits the request: it is processed and waits for review (PENDING_REVIEW)',
    async run(tools) {
      const id = need(tools.refs.informationRequestId, 'the information request');
      await tools.asUser('POST', `/v1/information-requests/${id}/submit`, undefined, [200]);
      tools.advance(1_000);
      return { summary: `Information request ${id} submitted: PROCESSING_SUBMISSION, then PENDING_REVIEW` };
    },
  },
  {
    id: 'review',
    caption: 'The review approves Northwind: its enrollment is ACTIVE, and a USD and a USDC account open',
    async run(tools) {
      tools.advance(tools.timeline.reviewMs);
      const accounts = await tools.asUser('GET', '/v1/accounts', undefined, [200]);
      const usd = (accounts.body.data as Array<{ id: string; currency: string }>).find((account) => account.currency === 'USD');
      if (!usd) throw new DemoStepError('The review did not open a USD account (the programme has no BUSINESS account template in USD)');
      tools.refs.usdAccountId = usd.id;
      return { summary: `Enrollment ACTIVE; accounts ${(accounts.body.data as Array<{ id: string }>).map((account) => account.id).join(', ')}` };
    },
  },
  {
    id: 'provider-ready',
    caption: 'The bank is ready: the USD account gets its ACH and Fedwire deposit instructions',
    async run(tools) {
      tools.advance(tools.timeline.providerReadyMs);
      const accountId = need(tools.refs.usdAccountId, 'the USD account');
      const account = await tools.asUser('GET', `/v1/accounts/${accountId}`, undefined, [200]);
      const ach = (account.body.depositInstructions as Array<{ id: string; rail: { type: string } }>).find((instruction) => instruction.rail.type === 'US.USD.ACH');
      if (!ach) throw new DemoStepError(`Account ${accountId} has no ACH deposit instruction`);
      tools.refs.achInstructionId = ach.id;
      return { summary: `Deposit instructions issued on ${accountId}, ACH ${ach.id}` };
    },
  },
  {
    id: 'deposit',
    caption: 'A customer pays invoice NW-1001: 5,000.00 USD arrives by ACH (PENDING)',
    async run(tools) {
      const accountId = need(tools.refs.usdAccountId, 'the USD account');
      const answer = await tools.asUser(
        'POST',
        `/v1/sandbox/accounts/${accountId}/deposits`,
        { depositInstructionId: need(tools.refs.achInstructionId, 'the ACH instruction'), amount: DEMO_AMOUNTS.deposit, counterpartyName: 'Contoso Retail', reference: 'NW-1001' },
        [202],
      );
      const id = TXN_IN_MESSAGE.exec(String(answer.body.message))?.[0];
      tools.refs.depositId = need(id, 'the deposit');
      return { summary: `Deposit ${id} PENDING`, transactionId: id };
    },
  },
  {
    id: 'deposit-settles',
    caption: 'One second later the deposit completes: 5,000.00 USD is available',
    async run(tools) {
      tools.advance(tools.timeline.depositCompletionMs);
      return { summary: `Deposit ${tools.refs.depositId} COMPLETED`, transactionId: tools.refs.depositId };
    },
  },
  {
    id: 'supplier',
    caption: 'Northwind adds its supplier, Initech LLC, with a US bank account',
    async run(tools) {
      const created = await tools.asUser(
        'POST',
        '/v1/beneficiaries',
        {
          type: 'BUSINESS',
          businessName: DEMO_SUPPLIER,
          relationshipToUser: 'THIRD_PARTY',
          instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: DEMO_SUPPLIER, accountNumber: '987654321012', routingNumber: '021000021' }],
        },
        [201],
      );
      tools.refs.beneficiaryId = created.body.id as string;
      tools.refs.instrumentId = created.body.instruments[0].id as string;
      return { summary: `Beneficiary ${tools.refs.beneficiaryId} with instrument ${tools.refs.instrumentId}` };
    },
  },
  {
    id: 'pacs008-payout',
    caption: 'Northwind pays Initech 1,250.00 USD with an ISO 20022 pacs.008 message: 1,250.50 USD held (0.50 USD ACH fee)',
    async run(tools) {
      const xml = supplierPacs008(need(tools.refs.usdAccountId, 'the USD account'), need(tools.refs.beneficiaryId, 'the supplier'));
      const answer = await tools.asUser('POST', '/v1/payout-origination/pacs008', base64(xml), [202], 'northwind-pacs008-0001');
      tools.refs.payoutId = answer.body.transactionId as string;
      return { summary: `pacs.008 ${answer.body.messageId} RECEIVED: payout ${tools.refs.payoutId} PENDING`, transactionId: tools.refs.payoutId };
    },
  },
  {
    id: 'payout-processing',
    caption: 'One second later the payout is PROCESSING on the ACH rail',
    async run(tools) {
      tools.advance(tools.timeline.outgoingProcessingMs);
      return { summary: `Payout ${tools.refs.payoutId} PROCESSING`, transactionId: tools.refs.payoutId };
    },
  },
  {
    id: 'payout-completes',
    caption: 'Three seconds more: the payout is COMPLETED and the hold becomes a debit',
    async run(tools) {
      tools.advance(tools.timeline.outgoingCompletionMs);
      return { summary: `Payout ${tools.refs.payoutId} COMPLETED`, transactionId: tools.refs.payoutId };
    },
  },
  {
    id: 'failing-payout',
    caption: 'A second payout of 300.91 USD: the magic cents .91 will make the rail reject it',
    async run(tools) {
      const payload = {
        entityId: need(tools.refs.usdAccountId, 'the USD account'),
        beneficiaryId: need(tools.refs.beneficiaryId, 'the supplier'),
        amount: DEMO_AMOUNTS.failedPayout,
        currency: 'USD',
        reference: 'Invoice INI-2026-0043',
      };
      const answer = await tools.asUser('POST', '/v1/payout-origination/json', base64(JSON.stringify(payload)), [202], 'northwind-json-0002');
      tools.refs.failedPayoutId = answer.body.transactionId as string;
      return { summary: `Payout ${tools.refs.failedPayoutId} PENDING, 301.41 USD held`, transactionId: tools.refs.failedPayoutId };
    },
  },
  {
    id: 'payout-fails',
    caption: 'The rail rejects it: FAILED with RAIL_REJECTED, and the hold is released',
    async run(tools) {
      tools.advance(tools.timeline.outgoingProcessingMs + tools.timeline.outgoingCompletionMs);
      return { summary: `Payout ${tools.refs.failedPayoutId} PROCESSING, then FAILED (RAIL_REJECTED)`, transactionId: tools.refs.failedPayoutId };
    },
  },
  {
    id: 'mistaken-deposit',
    caption: 'Another customer pays 250.00 USD by mistake; it completes a second later',
    async run(tools) {
      const accountId = need(tools.refs.usdAccountId, 'the USD account');
      const answer = await tools.asUser(
        'POST',
        `/v1/sandbox/accounts/${accountId}/deposits`,
        { depositInstructionId: need(tools.refs.achInstructionId, 'the ACH instruction'), amount: DEMO_AMOUNTS.mistakenDeposit, counterpartyName: 'Fabrikam Inc', reference: 'WRONG-PAYEE' },
        [202],
      );
      const id = need(TXN_IN_MESSAGE.exec(String(answer.body.message))?.[0], 'the second deposit');
      tools.refs.mistakenDepositId = id;
      tools.advance(tools.timeline.depositCompletionMs);
      return { summary: `Deposit ${id} PENDING, then COMPLETED`, transactionId: id };
    },
  },
  {
    id: 'refund',
    caption: 'Northwind refunds the 250.00 USD deposit to its payer (a REFUND over ACH)',
    async run(tools) {
      const body = { idempotencyKey: 'northwind-refund-0001', debitAccountId: need(tools.refs.usdAccountId, 'the USD account'), refundOf: need(tools.refs.mistakenDepositId, 'the second deposit') };
      const intent = await tools.asUser('POST', '/v1/transaction-intents', body, [201]);
      const committed = await tools.asUser('POST', `/v1/transaction-intents/${intent.body.id}/commit`, { idempotencyKey: body.idempotencyKey }, [200]);
      if (committed.body.status !== 'COMMITTED') throw new DemoStepError(`The refund intent is ${committed.body.status}: ${committed.body.statusReason ?? ''}`);
      tools.refs.refundId = committed.body.relatedTransactionId as string;
      return { summary: `Intent ${intent.body.id} COMMITTED: refund ${tools.refs.refundId} PENDING`, transactionId: tools.refs.refundId };
    },
  },
  {
    id: 'refund-completes',
    caption: 'The refund goes out: PROCESSING after one second, COMPLETED three seconds later',
    async run(tools) {
      tools.advance(tools.timeline.outgoingProcessingMs + tools.timeline.outgoingCompletionMs);
      return { summary: `Refund ${tools.refs.refundId} COMPLETED`, transactionId: tools.refs.refundId };
    },
  },
];
