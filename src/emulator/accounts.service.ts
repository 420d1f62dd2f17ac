import { prepared } from '../db/connection.js';
import type { AppContext } from '../context.js';
import { errors } from '../core/errors.js';
import type { AccountRow } from '../domains/accounts/accounts.schema.js';

/**
 * The account a control-plane route names in its path, of any user or programme: the one lookup every
 * `/_emulator/accounts/{accountId}/...` route and the control plane's transaction writes use. A network
 * sub-balance (`acct_..._usdc_ethereum`) is not an account of the API, so it is a 404 as an unknown id is,
 * as it is on /v1 (docs/decisions.md#control-plane-accounts).
 */
export function controlPlaneAccount(ctx: AppContext, accountId: string): AccountRow {
  const account = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE id = ?').get(accountId);
  if (!account || account.parent_account_id !== null) throw errors.notFound(`Account ${accountId} not found`);
  return account;
}

/**
 * Control plane (docs/control-plane.md#accounts): whether the account's deposit-instruction provider is
 * ready. Not ready, instruction creation answers 409 (interface 3.1); instructions already issued stay.
 */
export function setProviderReady(ctx: AppContext, accountId: string, ready: boolean): { accountId: string; providerReady: boolean; updatedAt: string } {
  return ctx.db.transaction(() => {
    const row = controlPlaneAccount(ctx, accountId);
    let updatedAt = row.updated_at;
    if ((row.provider_ready === 1) !== ready) {
      updatedAt = ctx.clock.nowIso();
      prepared(ctx.db, 'UPDATE accounts SET provider_ready = ?, updated_at = ? WHERE id = ?').run(ready ? 1 : 0, updatedAt, row.id);
    }
    return { accountId: row.id, providerReady: ready, updatedAt };
  }).immediate();
}
