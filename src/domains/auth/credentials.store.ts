import { createHash } from 'node:crypto';
import { prepared } from '../../db/connection.js';
import { readCacheOf } from '../../db/read-cache.js';
import type { AppContext } from '../../context.js';
import type { Fixtures } from '../../fixtures/fixtures.schema.js';
import { SCOPES, type Scope } from '../../http/scopes.js';
import type { AccessToken, CredentialStore, SigningKey } from '../../http/auth.js';

// The credentials of interface 5 as stored: API keys (seeded from the fixtures), their entitlements, access
// tokens (only their hash) and the users a MULTI_USER key may act for. Authentication (src/http/auth.ts)
// reads them through `credentials`, which the app hands to `registerAuth`: http plumbing names no domain
// (docs/architecture.md#layers).

interface ApiKeyRow {
  api_key: string;
  programme_id: string;
  secret: string;
  integration_type: 'SINGLE_USER' | 'MULTI_USER';
  user_id: string | null;
}

interface TokenRow {
  programme_id: string;
  user_id: string;
  scopes: string;
  expires_at_ms: number;
}

// Keys are read on every signed request and change only with the data (reset, fixtures): kept while the
// database is unchanged (db/read-cache.ts). Unknown keys are cached too (as null), bounded by the LRU.
const KEY_CACHE = { maxEntries: 1024, maxBytes: 1024 };

/** The API key, or undefined when there is none. */
export function findApiKey(ctx: AppContext, apiKey: string): SigningKey | undefined {
  const read = (): SigningKey | null => {
    const row = prepared<ApiKeyRow>(ctx.db, 'SELECT * FROM api_keys WHERE api_key = ?').get(apiKey);
    return row
      ? { apiKey: row.api_key, programmeId: row.programme_id, secret: row.secret, integrationType: row.integration_type, userId: row.user_id }
      : null;
  };
  if (ctx.config.readCache === 'off') return read() ?? undefined;
  return readCacheOf<SigningKey | null>(ctx.db, 'api-keys', KEY_CACHE, () => 1).get(apiKey, read) ?? undefined;
}

/** What is stored of an access token: its SHA-256, never the token (docs/decisions.md#bearer-tokens). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The access token, expired or not, or undefined when none has this value. */
export function findAccessToken(ctx: AppContext, token: string): AccessToken | undefined {
  const row = prepared<TokenRow>(ctx.db, 'SELECT programme_id, user_id, scopes, expires_at_ms FROM access_tokens WHERE token_hash = ?').get(hashToken(token));
  if (!row) return undefined;
  return {
    programmeId: row.programme_id,
    userId: row.user_id,
    scopes: new Set(row.scopes.split(' ').filter(Boolean) as Scope[]),
    expiresAtMs: row.expires_at_ms,
  };
}

/** Whether the user exists in the programme (the X-Service-User-Id of a MULTI_USER key: docs/decisions.md#user-context). */
export function isProgrammeUser(ctx: AppContext, programmeId: string, userId: string): boolean {
  return prepared<{ id: string }>(ctx.db, 'SELECT id FROM users WHERE id = ? AND programme_id = ?').get(userId, programmeId) !== undefined;
}

/** HMAC callers hold every scope unless their key lists entitlements; one shared read-only set for them. */
const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

// Entitlements come from the fixtures (keys exist only there), indexed once per loaded fixtures object.
const entitlementIndex = new WeakMap<Fixtures, Map<string, ReadonlySet<Scope>>>();

/** The scopes an API key is entitled to (docs/authentication.md#entitlements): its fixture list, or all. */
export function entitlementsOf(ctx: AppContext, apiKey: string): ReadonlySet<Scope> {
  let index = entitlementIndex.get(ctx.fixtures);
  if (!index) {
    index = new Map();
    for (const programme of ctx.fixtures.programmes) {
      for (const key of programme.apiKeys) if (key.entitlements) index.set(key.apiKey, new Set(key.entitlements));
    }
    entitlementIndex.set(ctx.fixtures, index);
  }
  return index.get(apiKey) ?? ALL_SCOPES;
}

/** What authentication reads, handed to `registerAuth` by the app (src/app.ts). */
export const credentials: CredentialStore = {
  apiKey: findApiKey,
  accessToken: findAccessToken,
  entitlements: entitlementsOf,
  isProgrammeUser,
};
