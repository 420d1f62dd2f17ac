import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { ServiceError, errors } from '../../core/errors.js';
import { MoneyFormatError, formatAmount, parseAmount } from '../../lib/money.js';
import { requireOwnAccount } from '../accounts/accounts.service.js';
import type { Caller } from '../../core/caller.js';
import { instructionOfAccount, pendingRequestOfAccount } from '../deposit-instructions/deposit-instructions.service.js';
import { NETWORK_TOKEN_CURRENCY, RAILS } from '../deposit-instructions/rails.js';
import { subBalanceId } from '../../fixtures/fixtures.seed.js';
import { createTransaction } from '../transactions/transactions.create.js';
import { assertCreditFits } from '../ledger/ledger.service.js';
import { incomingCredit } from '../transactions/incoming-credit.js';
import type { SimulateDepositBody } from './sandbox.schema.js';
import { notifyOutbox } from '../webhooks/outbox.js';

// The sandbox deposit simulator (docs/money-in.md#simulated-deposits, interface 4.13, 2.16). It records an INCOMING
// DEPOSIT exactly as a real one would look, then the rail timeline settles it (PENDING -> COMPLETED after
// timeline.depositCompletionMs). Magic amounts apply only to outgoing transactions, never here.

/** debitParty.payer.displayName when the request names no counterparty: the deposit comes from the service. */
export const SERVICE_PAYER_NAME = 'Service Sandbox';

/** Amount rows are read back as JS numbers, so an amount must stay within 2^53 - 1 minor units. */
const MAX_AMOUNT_MINOR = BigInt(Number.MAX_SAFE_INTEGER);

function amountError(type: 'InvalidFormat' | 'InvalidValue', message: string): ServiceError {
  return errors.field(type, 'amount', message);
}

function parseDepositAmount(value: string, currency: string, precision: number): bigint {
  let minor: bigint;
  try {
    minor = parseAmount(value, precision);
  } catch (error) {
    if (error instanceof MoneyFormatError) {
      throw amountError('InvalidFormat', `amount ${error.message}; send a decimal string in ${currency} with at most ${precision} decimals, e.g. "${formatAmount(10000n * 10n ** BigInt(precision), precision)}"`);
    }
    throw error;
  }
  if (minor <= 0n) throw amountError('InvalidValue', `amount must be greater than zero (interface 8); got "${value}"`);
  if (minor > MAX_AMOUNT_MINOR) {
    throw amountError('InvalidValue', `amount is larger than the emulator accepts (at most ${formatAmount(MAX_AMOUNT_MINOR, precision)} ${currency})`);
  }
  return minor;
}

/** POST /v1/sandbox/accounts/{accountId}/deposits */
/** The deposit accepted: the interface's message, and the id the route's `Location` names (docs/money-in.md#simulated-deposits). */
export interface AcceptedDeposit {
  transactionId: string;
  message: string;
}

export function simulateDeposit(ctx: AppContext, caller: Caller, accountId: string, body: SimulateDepositBody): AcceptedDeposit {
  const accepted = ctx.db.transaction(() => {
    const account = requireOwnAccount(ctx, caller, accountId);
    const precision = precisionOf(ctx, account.currency);
    const amountMinor = parseDepositAmount(body.amount, account.currency, precision);

    const instruction = instructionOfAccount(ctx, account.id, body.depositInstructionId);
    if (!instruction) {
      const pending = pendingRequestOfAccount(ctx, account.id, body.depositInstructionId);
      const message = pending
        ? `Deposit instruction ${body.depositInstructionId} is still being provisioned; it exists once provisioned (advance the clock by ${ctx.fixtures.timeline.provisioningMs} ms)`
        : `Deposit instruction ${body.depositInstructionId} is not an instruction of account ${account.id}; use an id from the depositInstructions of GET /v1/accounts/${account.id}`;
      throw errors.notFound(message, [{ type: 'NotFound', fieldRef: 'depositInstructionId', message }]);
    }
    // Nothing accepted may fail to settle: the balance this deposit would produce must fit the ledger
    // (docs/decisions.md#amount-bounds).
    assertCreditFits(ctx, account.id, amountMinor, 'amount');
    const rail = RAILS[instruction.rail_type];
    const reference = body.reference ?? null;
    const payerName = body.counterpartyName ?? SERVICE_PAYER_NAME;

    if (instruction.network) {
      // docs/decisions.md#stablecoin-sweep: the DEPOSIT lands in the network sub-balance in its token currency; the
      // sweep to the parent follows when it completes (transactions/internal-sweep.ts).
      const network = instruction.network;
      const tokenCurrency = NETWORK_TOKEN_CURRENCY[network]!;
      // the wallet address is drawn before the chain hash (docs/decisions.md#determinism)
      const payer = { displayName: payerName, walletAddress: `0x${ctx.ids.hex(40)}` };
      const deposit = { account, ledgerAccountId: subBalanceId(account.id, network), type: 'DEPOSIT', amountMinor, currency: tokenCurrency, payer, rail: instruction.rail_type } as const;
      const row = createTransaction(
        ctx,
        incomingCredit(deposit, {
          // interface 2.4: an on-chain debit's debitReference is the settling chain hash; the caller's
          // reference travels as debitMemo (docs/decisions.md#on-chain-deposit-reference)
          debitReference: `0x${ctx.ids.hex(64)}`,
          debitMemo: reference,
          depositReconciliationId: account.deposit_reconciliation_id,
          railBehaviour: 'NORMAL',
        }),
      );
      const total = ctx.fixtures.timeline.depositCompletionMs + ctx.fixtures.timeline.sweepCompletionMs;
      return {
        transactionId: row.id,
        message:
          `Deposit ${row.id} of ${formatAmount(amountMinor, precision)} ${tokenCurrency} on ${network} accepted into the ${network} sub-balance; ` +
          `it completes after ${ctx.fixtures.timeline.depositCompletionMs} ms and its INTERNAL_SWEEP to ${account.id} after ${total} ms of emulated time`,
      };
    }

    const deposit = { account, type: 'DEPOSIT', amountMinor, currency: account.currency, payer: { displayName: payerName }, rail: instruction.rail_type } as const;
    const row = createTransaction(
      ctx,
      incomingCredit(deposit, {
        // interface 2.16: the reference becomes debitReference; wire rails also carry it as remittance text
        // (interface 2.4 debitMemo: present on wire and SWIFT, absent on ACH). Without a reference the rail's
        // own reference is generated: an ACH trace number, otherwise a sandbox reference.
        debitReference: reference ?? (instruction.rail_type.endsWith('.ACH') ? ctx.ids.digits(15) : ctx.ids.reference('SIM')),
        debitMemo: reference !== null && rail?.carriesMemo ? reference : null,
        depositReconciliationId: account.deposit_reconciliation_id,
        railBehaviour: 'NORMAL',
      }),
    );
    return {
      transactionId: row.id,
      message:
        `Deposit ${row.id} of ${formatAmount(amountMinor, precision)} ${account.currency} via ${instruction.rail_label} accepted; ` +
        `it completes after ${ctx.fixtures.timeline.depositCompletionMs} ms of emulated time`,
    };
    // IMMEDIATE: this transaction reads before it writes; deferred, it could not take the write lock after
    // another process on the same database file committed (SQLITE_BUSY_SNAPSHOT, a 500).
  }).immediate();
  notifyOutbox(ctx);
  return accepted;
}
