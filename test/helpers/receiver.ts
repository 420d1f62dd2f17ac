import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../../src/context.js';
import { createTransaction } from '../../src/domains/transactions/transactions.create.js';
import { transitionTransaction } from '../../src/domains/transactions/transactions.transition.js';
import type { TransactionRow } from '../../src/domains/transactions/transactions.schema.js';

// A real HTTP webhook receiver on a random 127.0.0.1 port (for the webhook tests), plus a deposit maker that goes
// through the transaction core, so events come from the same code path as the API's.

export interface ReceivedRequest {
  method: string;
  /** Request target as received (path plus query). */
  url: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  body: any;
  /** Real time the request arrived / was answered (ms since epoch). */
  receivedAtMs: number;
  answeredAtMs?: number;
  answeredStatus?: number;
}

/** How to answer one request: a status (optionally after a delay, optionally with a body), or never answer. */
export type Answer = number | { status: number; delayMs?: number; body?: string } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Replace the answering rule (index counts every request received). */
  answer: (request: ReceivedRequest, index: number) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(
  options: { port?: number; path?: string; answer?: (request: ReceivedRequest, index: number) => Answer } = {},
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let body: unknown = null;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        body = null;
      }
      const received: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawBody, body, receivedAtMs: Date.now() };
      const index = requests.length;
      requests.push(received);
      const rule = receiver.answer(received, index);
      if (rule === 'hang') return;
      const status = typeof rule === 'number' ? rule : rule.status;
      const delayMs = typeof rule === 'number' ? 0 : (rule.delayMs ?? 0);
      const answerBody = typeof rule === 'number' ? undefined : rule.body;
      const send = () => {
        received.answeredAtMs = Date.now();
        received.answeredStatus = status;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(answerBody ?? (status >= 200 && status < 300 ? 'ok' : `nope ${status}`));
      };
      if (delayMs > 0) setTimeout(send, delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}${options.path ?? '/webhooks'}`,
    port,
    requests,
    answer: options.answer ?? (() => 200),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** A port with nothing listening on it (a receiver that is down). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A simulated incoming USD deposit for usr_acme through the transaction core (PENDING, completes after 1 s). */
export function createTestDeposit(ctx: AppContext, amountMinor = 10_000n): TransactionRow {
  return ctx.db.transaction(() =>
    createTransaction(ctx, {
      programmeId: 'prg_sandbox',
      userId: 'usr_acme',
      accountId: 'acct_acme_usd',
      debitAccountId: null,
      creditAccountId: 'acct_acme_usd',
      direction: 'INCOMING',
      type: 'DEPOSIT',
      debitAmountMinor: amountMinor,
      debitCurrency: 'USD',
      debitRail: 'US.USD.ACH',
      debitParty: { partyType: 'PAYER', payer: { displayName: 'Globex Corp' } },
      debitReference: 'SANDBOX-TEST',
      creditAmountMinor: amountMinor,
      creditCurrency: 'USD',
      creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_usd', displayName: 'Acme Operating (USD)', currency: 'USD' } },
      depositReconciliationId: 'RECON-ACME-USD',
    }),
  )();
}

/** Force a status write through the transaction core (emits transaction_status_updated). */
export function forceStatus(ctx: AppContext, id: string, status: 'PROCESSING' | 'COMPLETED' | 'FAILED'): TransactionRow {
  return ctx.db.transaction(() => transitionTransaction(ctx, id, status))();
}

/** Headers whose name starts with x-service-, lower-cased, as a plain object. */
export function serviceHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (name.startsWith('x-service-')) out[name] = String(value);
  return out;
}
