import type { FastifyInstance, InjectOptions } from 'fastify';
import { prepared } from '../db/connection.js';
import type { AppContext } from '../context.js';
import { errors } from '../core/errors.js';
import { HEADER, SCOPES } from '../http/auth.js';
import { entitlementsOf } from '../domains/auth/credentials.store.js';
import { signRequest } from '../lib/hmac.js';
import { targetProblem } from '../lib/request-target.js';
import type { ActAsInput, ActAsResult } from './act-as.schema.js';
import { internalCallHeaders } from '../faults/internal-call.js';

// The act-as proxy (docs/decisions.md#act-as): the dashboard drives the public API without holding any secret. The
// server picks a key that can act for the user, signs the request exactly as a client would (docs/authentication.md),
// and runs it through the app, so it meets the same validation, auth, idempotency and journal as any client call.

const PAYOUT_PREFIX = '/v1/payout-origination/';
// Only the header a client must add on its own (payout submission, interface 4.12); auth headers are the proxy's.
const IDEMPOTENCY_HEADER = 'idempotency-key';

interface KeyRow {
  api_key: string;
  secret: string;
  integration_type: 'SINGLE_USER' | 'MULTI_USER';
  programme_id: string;
}

/**
 * A MULTI_USER key of the user's programme, else a SINGLE_USER key bound to the user; only keys entitled to
 * every scope, so the dashboard never acts through a restricted key (docs/authentication.md#entitlements).
 */
export function keyForUser(ctx: AppContext, userId: string): KeyRow {
  const user = prepared<{ id: string; programme_id: string }>(ctx.db, 'SELECT id, programme_id FROM users WHERE id = ?').get(userId);
  if (!user) throw errors.notFound(`User ${userId} not found`);
  const key = prepared<KeyRow>(
    ctx.db,
    `SELECT api_key, secret, integration_type, programme_id FROM api_keys
      WHERE programme_id = ? AND (integration_type = 'MULTI_USER' OR user_id = ?)
      ORDER BY CASE integration_type WHEN 'MULTI_USER' THEN 0 ELSE 1 END, api_key`,
  )
    .all(user.programme_id, user.id)
    .find((candidate) => entitlementsOf(ctx, candidate.api_key).size === SCOPES.length);
  if (!key) {
    throw errors.conflict(
      `Programme ${user.programme_id} has no MULTI_USER key and no SINGLE_USER key bound to ${userId} entitled to every scope; add one to the fixtures`,
    );
  }
  return key;
}

function checkPath(path: string): void {
  // Dot segments or encodings the URL parser would rewrite could leave /v1/ (e.g. /v1/../_emulator/...).
  const problem = targetProblem(path);
  if (problem !== null || !path.startsWith('/v1/')) {
    throw errors.field('InvalidValue', 'path', `path must be a normalized /v1/ path (no dot segments, no encoded dots or slashes, no fragment; URL-encode special characters)${problem ? `: ${problem}` : ''}`);
  }
}

/**
 * `prefix`: the path prefix of the sandbox acting (a session's `/_sessions/{id}`, '' for the root): the one app serves
 * every sandbox, so the request goes, and is signed, under it (docs/sessions.md#addresses-and-signing).
 */
export async function actAs(app: FastifyInstance, ctx: AppContext, input: ActAsInput, prefix = ''): Promise<ActAsResult> {
  checkPath(input.path);
  const payout = input.path.startsWith(PAYOUT_PREFIX);
  if ((input.method === 'GET' || input.method === 'DELETE') && input.body !== undefined) {
    throw errors.field('InvalidValue', 'body', `A ${input.method} request carries no body; leave body out`);
  }
  if (payout && input.body !== undefined && typeof input.body !== 'string') {
    throw errors.field('InvalidFormat', 'body', 'The payout endpoint takes a Base64 text body: send body as a string');
  }
  const key = keyForUser(ctx, input.userId);

  const payload = input.body === undefined ? undefined : payout ? (input.body as string) : JSON.stringify(input.body);
  // docs/decisions.md#hmac-timestamp: milliseconds of the real wall clock; the payout variant takes RFC 3339 UTC
  // instead.
  const timestamp = payout ? new Date(ctx.clock.realNowMs()).toISOString() : String(ctx.clock.realNowMs());
  const signature = signRequest({ apiKey: key.api_key, secret: key.secret, timestamp, method: input.method, target: prefix + input.path, body: payload ?? '' });
  const headers: Record<string, string> = {
    [HEADER.apiKey]: key.api_key,
    [HEADER.timestamp]: timestamp,
    [HEADER.programId]: key.programme_id,
    [HEADER.signature]: payout ? `sha256=${signature}` : signature,
  };
  if (key.integration_type === 'MULTI_USER') headers[HEADER.userId] = input.userId;
  if (payload !== undefined) headers['content-type'] = payout ? 'text/plain' : 'application/json';
  if (input.idempotencyKey !== undefined) headers[IDEMPOTENCY_HEADER] = input.idempotencyKey;

  const actedAs = { apiKey: key.api_key, integrationType: key.integration_type, programmeId: key.programme_id, userId: input.userId };
  // not subject to the sandbox's fault rules (docs/faults.md#what-rules-never-touch)
  const response = await app.inject({ method: input.method as InjectOptions['method'], url: prefix + input.path, headers: { ...headers, ...internalCallHeaders() }, payload });
  return {
    status: response.statusCode,
    body: parseBody(response.body, String(response.headers['content-type'] ?? '')),
    actedAs,
  };
}

function parseBody(text: string, contentType: string): unknown {
  if (text === '') return null;
  if (contentType.includes('json')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
