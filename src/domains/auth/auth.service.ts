import { sql } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { hashToken, newAccessToken, SCOPES, TOKEN_LIFETIME_SECONDS, type Scope } from '../../http/auth.js';
import type { TokenResponse } from './auth.schema.js';

/** Issue a bearer token for the caller's user; only its hash is stored (contract 2). */
export function issueToken(ctx: AppContext, caller: { programmeId: string; userId: string }, scopes: readonly Scope[] | undefined): TokenResponse {
  const granted = scopes ? SCOPES.filter((scope) => scopes.includes(scope)) : [...SCOPES];
  const token = newAccessToken();
  const expiresAtMs = ctx.clock.nowMs() + TOKEN_LIFETIME_SECONDS * 1000;
  sql(ctx.db, 'INSERT INTO access_tokens (token_hash, programme_id, user_id, scopes, expires_at_ms, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
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
