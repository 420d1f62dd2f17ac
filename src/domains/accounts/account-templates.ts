import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { scheduleJob } from '../../scheduler/scheduler.js';
import { subBalanceId } from '../../fixtures/fixtures.seed.js';
import type { AccountTemplate } from '../../fixtures/fixtures.schema.js';
import { insertInstruction } from '../deposit-instructions/deposit-instructions.service.js';
import { NETWORK_TOKEN_CURRENCY, RAILS, newFiatDetails, newWalletAddress } from '../deposit-instructions/rails.js';
import type { UserRow } from '../users/users.schema.js';

// Accounts of onboarded users (docs/onboarding.md#accounts-of-onboarded-users): when an enrollment becomes
// ACTIVE the user receives the programme's account templates for its user type. The accounts exist at
// once, but their deposit-instruction provider is not ready yet (interface 3.1: 409 while onboarding);
// `timeline.providerReadyMs` later a job marks the provider ready and it issues the template's
// instructions. Every id, number and address comes from the injected id source.

export const PROVIDER_READY_JOB = 'account.provider-ready';

interface PendingInstructions {
  accountId: string;
  instructions: Array<{ name: string; rail: string }>;
}

function templatesFor(ctx: AppContext, user: UserRow): AccountTemplate[] {
  const programme = ctx.fixtures.programmes.find((candidate) => candidate.id === user.programme_id);
  return programme ? programme.accountTemplates[user.type] : [];
}

/**
 * Open the template accounts of a user whose enrollment just became ACTIVE. Idempotent: a user who already
 * holds an account (a fixture user, or one activated before) receives nothing more, so an activation that
 * happens again never opens a second set.
 */
export function openTemplateAccounts(ctx: AppContext, user: UserRow): string[] {
  const holds = prepared<{ n: number }>(ctx.db, 'SELECT COUNT(*) AS n FROM accounts WHERE user_id = ?').get(user.id)!;
  if (holds.n > 0) return [];
  const now = ctx.clock.nowIso();
  const nowMs = ctx.clock.nowMs();
  const insert = prepared(
    ctx.db,
    `INSERT INTO accounts (id, programme_id, user_id, parent_account_id, kind, currency, country, network, status, display_name,
       deposit_reconciliation_id, provider_ready, created_at, created_at_ms, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'ACTIVE', ?, ?, ?, ?, ?, ?)`,
  );
  const pending: PendingInstructions[] = [];
  for (const template of templatesFor(ctx, user)) {
    const id = ctx.ids.id('account');
    const reconciliation = ctx.ids.reference('RECON-');
    insert.run(id, user.programme_id, user.id, null, template.kind, template.currency, template.country ?? null, null, template.displayName, reconciliation, 0, now, nowMs, now);
    if (template.kind === 'STABLECOIN') {
      // one sub-balance per network, as for fixture accounts (fixtures.seed.ts); they need no provider
      for (const network of Object.keys(NETWORK_TOKEN_CURRENCY)) {
        insert.run(subBalanceId(id, network), user.programme_id, user.id, id, 'SUB_BALANCE', NETWORK_TOKEN_CURRENCY[network]!, null, network, null, reconciliation, 1, now, nowMs, now);
      }
    }
    pending.push({ accountId: id, instructions: template.depositInstructions });
  }
  if (pending.length > 0) scheduleJob(ctx, PROVIDER_READY_JOB, nowMs + ctx.fixtures.timeline.providerReadyMs, { accounts: pending });
  return pending.map((entry) => entry.accountId);
}

/**
 * Job handler: the provider of the template accounts is ready; it issues their template instructions
 * (ACTIVE at once). Only the accounts named in the job are touched: a fixture account with
 * `providerReady: false` stays so until the control plane says otherwise. Running it twice issues nothing
 * more.
 */
export function runProviderReady(ctx: AppContext, payload: Record<string, unknown>): void {
  const entries = (payload.accounts ?? []) as PendingInstructions[];
  for (const entry of entries) {
    const account = prepared<{ id: string; user_id: string; provider_ready: number }>(ctx.db, 'SELECT id, user_id, provider_ready FROM accounts WHERE id = ?').get(
      entry.accountId,
    );
    if (!account) continue;
    const now = ctx.clock.nowIso();
    if (account.provider_ready === 0) prepared(ctx.db, 'UPDATE accounts SET provider_ready = 1, updated_at = ? WHERE id = ?').run(now, account.id);
    const holder = prepared<{ name: string }>(ctx.db, 'SELECT name FROM users WHERE id = ?').get(account.user_id)?.name ?? '';
    // Made ready earlier by other means (the control plane), the provider still issues the template's
    // instructions now; a rail the account already has an instruction on is not issued twice.
    const issued = new Set(prepared<{ rail_type: string }>(ctx.db, 'SELECT rail_type FROM deposit_instructions WHERE account_id = ?').all(account.id).map((row) => row.rail_type));
    for (const instruction of entry.instructions) {
      const rail = RAILS[instruction.rail];
      if (!rail || issued.has(rail.type)) continue; // the fixtures loader refuses unknown rails; a stale job payload is skipped
      const details = rail.kind === 'STABLECOIN' ? { accountHolderName: holder, walletAddress: newWalletAddress(ctx.ids) } : newFiatDetails(ctx.ids, rail, holder);
      insertInstruction(ctx, { id: ctx.ids.id('depositInstruction'), accountId: account.id, name: instruction.name, idempotencyKey: null, rail, details, createdAt: now });
    }
  }
}
