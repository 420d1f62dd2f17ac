import { randomBytes } from 'node:crypto';
import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { SCOPES, type Scope } from '../../http/scopes.js';
import type { TokenResponse } from './auth.schema.js';
import { hashToken } from './credentials.store.js';
import { errors } from '../../core/errors.js';
import { clampToClockRange } from '../../lib/clock.js';
import type { Caller } from '../../core/caller.js';

const TOKEN_LIFETIME_SECONDS = 3600; // docs/decisions.md#bearer-tokens

/** A fresh random bearer token (docs/decisions.md#bearer-tokens: random, never derived from the clock). */
function newAccessToken(): string {
  return `sbx_at_${randomBytes(24).toString('base64url')}`;
}

/**
 * Issue a bearer token for the caller's user; only its hash is stored (docs/decisions.md#bearer-tokens). A token never
 * holds a scope the signing key is not entitled to (docs/authentication.md#entitlements): asking for one is a 403.
 */
export function issueToken(
  ctx: AppContext,
  caller: Caller,
  scopes: readonly Scope[] | undefined,
  entitled: ReadonlySet<Scope> = new Set(SCOPES),
): TokenResponse {
  return ctx.db.transaction(() => issueTokenNow(ctx, caller, scopes, entitled))();
}

function issueTokenNow(
  ctx: AppContext,
  caller: Caller,
  scopes: readonly Scope[] | undefined,
  entitled: ReadonlySet<Scope> = new Set(SCOPES),
): TokenResponse {
  const outside = (scopes ?? []).filter((scope) => !entitled.has(scope));
  if (outside.length > 0) throw errors.forbidden(`API key lacks entitlement: ${outside.join(', ')}; the key is entitled to ${[...entitled].join(', ') || 'nothing'}`);
  const granted = SCOPES.filter((scope) => (scopes ? scopes.includes(scope) : true) && entitled.has(scope));
  const token = newAccessToken();
  const expiresAtMs = clampToClockRange(ctx.clock.nowMs() + TOKEN_LIFETIME_SECONDS * 1000); // docs/decisions.md#clock-range
  prepared(ctx.db, 'INSERT INTO access_tokens (token_hash, programme_id, user_id, scopes, expires_at_ms, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
    hashToken(token),
    caller.programmeId,
    caller.userId,
    granted.join(' '),
    expiresAtMs,
    ctx.clock.nowIso(),
  );
  return {
    accessToken: token,
    tokenType: 'Bearer',
    expiresIn: TOKEN_LIFETIME_SECONDS,
    expiresAt: new Date(expiresAtMs).toISOString(),
    scopes: granted,
    programId: caller.programmeId,
    userId: caller.userId,
  };
}
