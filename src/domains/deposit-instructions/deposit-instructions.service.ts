import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../core/errors.js';
import { scheduleJob } from '../../scheduler/scheduler.js';
import { requireOwnAccount } from '../accounts/accounts.service.js';
import type { Caller } from '../../core/caller.js';
import type { AccountRow } from '../accounts/accounts.schema.js';
import {
  RAILS,
  STABLECOIN_NETWORKS,
  instructionDisclosures,
  instructionFields,
  newFiatDetails,
  newWalletAddress,
  primaryFiatRail,
  stablecoinRail,
  type InstructionDetails,
  type RailDefinition,
} from './rails.js';
import type {
  CreateDepositInstructionBody,
  DepositInstructionAccepted,
  DepositInstructionRequestRow,
  DepositInstructionRow,
} from './deposit-instructions.schema.js';

// Interface 4.1 / 3.1 and docs/decisions.md#pending-instructions-hidden: a request is accepted (202, PENDING) and
// provisioned by a job after `timeline.provisioningMs`; only then does the instruction exist (in the account detail,
// the statement and the deposit simulator). Rails and numbers are chosen when the request is accepted, so two requests
// in a row never pick the same stablecoin network.

export const PROVISION_DEPOSIT_INSTRUCTION_JOB = 'deposit-instruction.provision';

function accepted(row: DepositInstructionRequestRow): DepositInstructionAccepted {
  return { accountId: row.account_id, name: row.name, status: 'PENDING', idempotencyKey: row.idempotency_key };
}

/** POST /v1/accounts/{accountId}/deposit-instructions */
export function requestDepositInstruction(
  ctx: AppContext,
  caller: Caller,
  accountId: string,
  body: CreateDepositInstructionBody,
): DepositInstructionAccepted {
  return ctx.db.transaction(() => {
    const account = requireOwnAccount(ctx, caller, accountId);
    // Interface 4.1: a retry with the same key is de-duplicated and keeps the first name. Keys are scoped
    // to the account (the same key on another account is another request).
    const existing = prepared<DepositInstructionRequestRow>(
      ctx.db,
      'SELECT * FROM deposit_instruction_requests WHERE account_id = ? AND idempotency_key = ?',
    ).get(account.id, body.idempotencyKey);
    if (existing) return accepted(existing);

    if (!account.provider_ready) {
      throw errors.conflict(
        `No deposit-instruction provider is ready for account ${account.id} yet (the account is still onboarding); retry once the provider is ready`,
      );
    }
    const plan = planInstruction(ctx, account);
    const id = ctx.ids.id('depositInstruction');
    const now = ctx.clock.nowIso();
    prepared(
      ctx.db,
      `INSERT INTO deposit_instruction_requests (id, account_id, user_id, name, idempotency_key, status, rail_type, network, details, created_at, created_at_ms)
       VALUES (?, ?, ?, ?, ?, 'PENDING', ?, ?, ?, ?, ?)`,
    ).run(id, account.id, account.user_id, body.name, body.idempotencyKey, plan.rail.type, plan.rail.network ?? null, JSON.stringify(plan.details), now, Date.parse(now));
    scheduleJob(ctx, PROVISION_DEPOSIT_INSTRUCTION_JOB, ctx.clock.nowMs() + ctx.fixtures.timeline.provisioningMs, { requestId: id });
    return accepted(getRequest(ctx, id)!);
    // IMMEDIATE: the retry check reads before the insert writes; deferred, a second process on the same
    // database file could commit in between and this one would fail with SQLITE_BUSY_SNAPSHOT (a 500).
  }).immediate();
}

function getRequest(ctx: AppContext, id: string): DepositInstructionRequestRow | undefined {
  return prepared<DepositInstructionRequestRow>(ctx.db, 'SELECT * FROM deposit_instruction_requests WHERE id = ?').get(id);
}

function holderName(ctx: AppContext, userId: string): string {
  return prepared<{ name: string }>(ctx.db, 'SELECT name FROM users WHERE id = ?').get(userId)?.name ?? '';
}

/** Networks a stablecoin account supports: those it has a sub-balance for, in STABLECOIN_NETWORKS order. */
function supportedNetworks(ctx: AppContext, accountId: string): string[] {
  const present = new Set(
    prepared<{ network: string }>(ctx.db, "SELECT network FROM accounts WHERE parent_account_id = ? AND kind = 'SUB_BALANCE'")
      .all(accountId)
      .map((row) => row.network),
  );
  return STABLECOIN_NETWORKS.filter((network) => present.has(network));
}

/** Networks the account already has an address on, or has one being provisioned for. */
function takenNetworks(ctx: AppContext, accountId: string): Set<string> {
  const rows = prepared<{ network: string | null }>(
    ctx.db,
    `SELECT network FROM deposit_instructions WHERE account_id = ? AND network IS NOT NULL
     UNION SELECT network FROM deposit_instruction_requests WHERE account_id = ? AND status = 'PENDING' AND network IS NOT NULL`,
  ).all(accountId, accountId);
  return new Set(rows.map((row) => row.network!));
}

/**
 * The rail and details of a new instruction (README "Deposit instructions"):
 * - fiat: the currency's primary rail (USD: ACH, EUR: SEPA, GBP: Faster Payments) with fresh numbers;
 * - stablecoin: the first supported network (ETHEREUM, BASE, POLYGON) the account has no address on yet,
 *   with a fresh address; none left is a 409 (no provider can add another address to this account).
 */
function planInstruction(ctx: AppContext, account: AccountRow): { rail: RailDefinition; details: InstructionDetails } {
  const holder = holderName(ctx, account.user_id);
  if (account.kind === 'STABLECOIN') {
    const taken = takenNetworks(ctx, account.id);
    const supported = supportedNetworks(ctx, account.id);
    const network = supported.find((candidate) => !taken.has(candidate));
    const rail = network ? stablecoinRail(network) : undefined;
    if (!rail) {
      throw errors.conflict(
        `Account ${account.id} already has a deposit address on every network it supports (${supported.join(', ')}); no provider can add another`,
      );
    }
    return { rail, details: { accountHolderName: holder, walletAddress: newWalletAddress(ctx.ids) } };
  }
  const rail = primaryFiatRail(account.currency);
  if (!rail) {
    throw errors.conflict(`No deposit-instruction provider serves ${account.currency} accounts; rails exist for ${fiatCurrencies().join(', ')}`);
  }
  return { rail, details: newFiatDetails(ctx.ids, rail, holder) };
}

function fiatCurrencies(): string[] {
  return [...new Set(Object.values(RAILS).filter((rail) => rail.kind === 'FIAT').map((rail) => rail.currency))];
}

export function insertInstruction(
  ctx: AppContext,
  input: { id: string; accountId: string; name: string; idempotencyKey: string | null; rail: RailDefinition; details: InstructionDetails; createdAt: string },
): void {
  const now = ctx.clock.nowIso();
  prepared(
    ctx.db,
    `INSERT INTO deposit_instructions (id, account_id, name, idempotency_key, status, rail_type, rail_label, supported_currencies,
       fields, disclosures, network, wallet_address, created_at, created_at_ms, updated_at)
     VALUES (?, ?, ?, ?, 'ACTIVE', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    input.id,
    input.accountId,
    input.name,
    input.idempotencyKey,
    input.rail.type,
    input.rail.label,
    JSON.stringify([input.rail.currency]),
    JSON.stringify(instructionFields(input.rail, input.details)),
    JSON.stringify(instructionDisclosures(input.rail)),
    input.rail.network ?? null,
    input.details.walletAddress ?? null,
    input.createdAt,
    Date.parse(input.createdAt),
    now,
  );
}

/**
 * Job handler: provision a request. The instruction keeps the request's id and createdAt and is ACTIVE
 * from now on. A new stablecoin address also appears on the caller's other stablecoin accounts that
 * support its network (interface 2.2), as their own instruction with the same address.
 */
export function provisionDepositInstruction(ctx: AppContext, payload: Record<string, unknown>): void {
  const request = getRequest(ctx, String(payload.requestId));
  if (!request || request.status !== 'PENDING') return;
  const rail = RAILS[request.rail_type]!;
  const details = JSON.parse(request.details) as InstructionDetails;
  insertInstruction(ctx, {
    id: request.id,
    accountId: request.account_id,
    name: request.name,
    idempotencyKey: request.idempotency_key,
    rail,
    details,
    createdAt: request.created_at,
  });
  prepared(ctx.db, "UPDATE deposit_instruction_requests SET status = 'PROVISIONED', provisioned_at = ? WHERE id = ?").run(ctx.clock.nowIso(), request.id);

  if (rail.kind !== 'STABLECOIN' || !details.walletAddress || !request.network) return;
  const siblings = prepared<AccountRow>(
    ctx.db,
    `SELECT * FROM accounts WHERE user_id = ? AND kind = 'STABLECOIN' AND parent_account_id IS NULL AND id <> ? AND status = 'ACTIVE'
     ORDER BY created_at_ms, id`,
  ).all(request.user_id, request.account_id);
  for (const sibling of siblings) {
    if (!supportedNetworks(ctx, sibling.id).includes(request.network)) continue;
    const already = prepared<{ id: string }>(ctx.db, 'SELECT id FROM deposit_instructions WHERE account_id = ? AND network = ? AND wallet_address = ?').get(
      sibling.id,
      request.network,
      details.walletAddress,
    );
    if (already) continue;
    insertInstruction(ctx, {
      id: ctx.ids.id('depositInstruction'),
      accountId: sibling.id,
      name: request.name,
      idempotencyKey: null,
      rail,
      details,
      createdAt: ctx.clock.nowIso(),
    });
  }
}

/** An instruction of the account, for the deposit simulator; undefined when there is none by that id. */
export function instructionOfAccount(ctx: AppContext, accountId: string, instructionId: string): DepositInstructionRow | undefined {
  return prepared<DepositInstructionRow>(ctx.db, 'SELECT * FROM deposit_instructions WHERE id = ? AND account_id = ?').get(instructionId, accountId);
}

/** A request still being provisioned under that id (so a 404 can say why). */
export function pendingRequestOfAccount(ctx: AppContext, accountId: string, instructionId: string): DepositInstructionRequestRow | undefined {
  const row = getRequest(ctx, instructionId);
  return row && row.account_id === accountId && row.status === 'PENDING' ? row : undefined;
}
