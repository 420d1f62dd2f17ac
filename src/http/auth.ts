import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { Config } from '../config.js';
import { ctxOf } from './request-sandbox.js';
import { hexDigestsEqual, hmacSha256Hex } from '../lib/hmac.js';
import { pathPrefixOf } from './public-url.js';
import { errors, ServiceError } from '../core/errors.js';
import type { Caller, CallerScope } from '../core/caller.js';
import type { Scope } from './scopes.js';

// Authentication of interface 5 with the emulator's rules (docs/authentication.md): HMAC headers (server-to-server),
// bearer tokens (client-server), the payout endpoint's HMAC variant, and the user context that every
// user-scoped endpoint acts for. The stored keys, tokens and users are the auth domain's: they are read through
// the `CredentialStore` the app hands to `registerAuth` (src/domains/auth/credentials.store.ts), as http plumbing
// names no domain (docs/architecture.md#layers).

export { SCOPES, type Scope } from './scopes.js';

export const HEADER = {
  apiKey: 'x-service-api-key',
  timestamp: 'x-service-timestamp',
  programId: 'x-service-program-id',
  userId: 'x-service-user-id',
  signature: 'x-service-signature',
} as const;

/** The headers that make a request an HMAC-signed one (the programme and user headers are not credentials). */
const HMAC_CREDENTIAL_HEADERS = [HEADER.apiKey, HEADER.timestamp, HEADER.signature] as const;

export const HMAC_SKEW_MS = 60_000; // interface 5.2
export const PAYOUT_SKEW_MS = 300_000; // docs/decisions.md#payout-hmac-variant

export interface AuthPolicy {
  /**
   * Accepted modes; `payout` is the HMAC variant of interface 4.12. `admin`: the control plane, open unless
   * `--admin-token` is set, then that token (docs/decisions.md#control-plane-open). `none`: no credentials
   * ever (health, the dashboard's page and files, signed statement links).
   */
  modes: ReadonlyArray<'hmac' | 'bearer' | 'payout' | 'admin' | 'none'>;
  /** Bearer tokens must carry this scope (HMAC callers hold every scope). */
  scope?: Scope;
  /**
   * `required`: the call acts for one user (docs/decisions.md#user-context); `programme`: programme-level;
   * `user-or-programme`: as `required`, except that a MULTI_USER key without X-Service-User-Id acts for the
   * whole programme (userId null; docs/money-in.md#programme-wide-transactions, interface 4.5).
   */
  user: 'required' | 'programme' | 'user-or-programme';
}

export interface AuthContext {
  mode: 'hmac' | 'bearer' | 'payout' | 'admin' | 'none';
  programmeId: string;
  apiKey: string | null;
  integrationType: 'SINGLE_USER' | 'MULTI_USER' | null;
  /** The user the call acts for; null on programme-level calls and programme-scope reads. */
  userId: string | null;
  scopes: ReadonlySet<Scope>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthPolicy;
  }
  interface FastifyRequest {
    rawBody?: Buffer;
    auth?: AuthContext;
  }
}

/** An API key as a signed request is checked against it. */
export interface SigningKey {
  apiKey: string;
  programmeId: string;
  secret: string;
  integrationType: 'SINGLE_USER' | 'MULTI_USER';
  userId: string | null;
}

/** A stored access token (its expiry is checked here, against the emulated clock). */
export interface AccessToken {
  programmeId: string;
  userId: string;
  scopes: ReadonlySet<Scope>;
  expiresAtMs: number;
}

/** The reads authentication needs of the auth domain, handed in by the app (`registerAuth`). */
export interface CredentialStore {
  /** The API key, or undefined when there is none. */
  apiKey(ctx: AppContext, apiKey: string): SigningKey | undefined;
  /** The access token with this value, or undefined when there is none. */
  accessToken(ctx: AppContext, token: string): AccessToken | undefined;
  /** The scopes an API key is entitled to (docs/authentication.md#entitlements). */
  entitlements(ctx: AppContext, apiKey: string): ReadonlySet<Scope>;
  /** Whether the user belongs to the programme. */
  isProgrammeUser(ctx: AppContext, programmeId: string, userId: string): boolean;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The request target as sent: under a session's path prefix, the prefix included (http/path-prefix.ts). */
function requestTarget(request: FastifyRequest): string {
  return request.originalUrl;
}

const NO_BODY = Buffer.alloc(0);

/**
 * Lower-case hex HMAC-SHA256 of the canonical string (docs/decisions.md#hmac-canonical-string) (apiKey + timestamp +
 * METHOD + target + raw body): the same bytes as lib/hmac.ts canonicalRequest, fed to the MAC in two parts instead of
 * being copied into one buffer first (this runs on every signed request).
 */
function canonicalSignature(secret: string, apiKey: string, timestamp: string, request: FastifyRequest): string {
  return hmacSha256Hex(secret, `${apiKey}${timestamp}${request.method.toUpperCase()}${requestTarget(request)}`, request.rawBody ?? NO_BODY);
}

/**
 * How a signed request spells its timestamp and signature. The two formats of interface 5.2 (HMAC mode:
 * epoch milliseconds, bare hex) and 4.12 (the payout variant: RFC 3339, `sha256=<hex>`, header lengths
 * checked first); both sign the same canonical string with the key's secret.
 */
interface HmacFormat {
  /** The payout variant checks the key and programme headers' lengths before anything else. */
  checkHeaderLengths: boolean;
  timestamp: {
    missing: string;
    /** The instant in epoch ms, or undefined when the value is not in this format. */
    parseMs(value: string): number | undefined;
    malformed: string;
    skewMs: number;
    skewed: string;
  };
  signature: {
    /** The hex digest carried by the header, or undefined when the header is not in this format. */
    hexOf(value: string): string | undefined;
    malformed: string;
    mismatch: string;
  };
}

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]00:00)$/i;
const PAYOUT_SIGNATURE = /^sha256=[A-Fa-f0-9]{64}$/;

/** HMAC mode (docs/authentication.md#hmac-headers-server-to-server, interface 5.2). */
const HMAC_FORMAT: HmacFormat = {
  checkHeaderLengths: false,
  timestamp: {
    missing: 'Missing X-Service-Timestamp header (milliseconds since the Unix epoch)',
    parseMs: (value) => (/^\d{1,16}$/.test(value) ? Number(value) : undefined),
    malformed: 'X-Service-Timestamp must be milliseconds since the Unix epoch, as digits',
    skewMs: HMAC_SKEW_MS,
    skewed: 'X-Service-Timestamp is more than 60 seconds away from the server clock; sign each request with the current time',
  },
  signature: {
    hexOf: (value) => value, // any other text simply does not match
    malformed: '',
    mismatch: 'Signature mismatch: expected lower-case hex HMAC-SHA256 of apiKey + timestamp + METHOD + path?query + raw body, keyed with the API secret',
  },
};

/** The payout endpoint's HMAC variant (docs/decisions.md#payout-hmac-variant, interface 4.12, 5.2). */
const PAYOUT_FORMAT: HmacFormat = {
  checkHeaderLengths: true,
  timestamp: {
    missing: 'Missing X-Service-Timestamp header (RFC 3339 UTC on this endpoint)',
    parseMs: (value) => (RFC3339_UTC.test(value) && !Number.isNaN(Date.parse(value)) ? Date.parse(value) : undefined),
    malformed: 'X-Service-Timestamp must be an RFC 3339 UTC timestamp on the payout endpoint, e.g. 2026-03-01T12:00:00Z',
    skewMs: PAYOUT_SKEW_MS,
    skewed: 'X-Service-Timestamp is more than 300 seconds away from the server clock',
  },
  signature: {
    hexOf: (value) => (PAYOUT_SIGNATURE.test(value) ? value.slice('sha256='.length) : undefined),
    malformed: 'X-Service-Signature must match ^sha256=[A-Fa-f0-9]{64}$',
    mismatch: 'Signature mismatch: expected sha256=<hex HMAC-SHA256 of apiKey + timestamp + POST + path?query + raw body>',
  },
};

function headerLengthCheck(name: string, value: string | undefined, min: number, max: number): void {
  if (value !== undefined && (value.length < min || value.length > max)) {
    throw errors.field('InvalidFormat', name, `${name} must be ${min}-${max} characters`);
  }
}

/** Check a signed request in the given format; returns its API key. Every refusal is a 401, except the programme's 403. */
function verifySignedRequest(ctx: AppContext, store: CredentialStore, request: FastifyRequest, format: HmacFormat): SigningKey {
  const apiKey = header(request, HEADER.apiKey);
  const timestamp = header(request, HEADER.timestamp);
  const signature = header(request, HEADER.signature);
  const programmeHeader = header(request, HEADER.programId);
  if (format.checkHeaderLengths) {
    headerLengthCheck('X-Service-Api-Key', apiKey, 8, 128);
    headerLengthCheck('X-Service-Program-Id', programmeHeader, 8, 128);
  }
  if (!apiKey) throw errors.unauthorized('Missing X-Service-Api-Key header');
  const key = store.apiKey(ctx, apiKey);
  if (!key) throw errors.unauthorized('Unknown API key');
  if (!timestamp) throw errors.unauthorized(format.timestamp.missing);
  const signedAtMs = format.timestamp.parseMs(timestamp);
  if (signedAtMs === undefined) throw errors.unauthorized(format.timestamp.malformed);
  if (Math.abs(ctx.clock.realNowMs() - signedAtMs) > format.timestamp.skewMs) throw errors.unauthorized(format.timestamp.skewed);
  if (!signature) throw errors.unauthorized('Missing X-Service-Signature header');
  const givenHex = format.signature.hexOf(signature);
  if (givenHex === undefined) throw errors.unauthorized(format.signature.malformed);
  if (!programmeHeader) throw errors.unauthorized('Missing X-Service-Program-Id header');
  if (!hexDigestsEqual(canonicalSignature(key.secret, apiKey, timestamp, request), givenHex)) {
    // Under a session the path signed is the one sent, prefix included: say so, it is the usual slip (docs/sessions.md#addresses-and-signing).
    const prefix = pathPrefixOf(request);
    throw errors.unauthorized(prefix ? `${format.signature.mismatch}; path?query is the path as sent, ${prefix} included` : format.signature.mismatch);
  }
  if (programmeHeader !== key.programmeId) throw errors.forbidden('X-Service-Program-Id does not match the programme of this API key');
  return key;
}

function verifyBearer(ctx: AppContext, store: CredentialStore, token: string): AuthContext {
  const found = store.accessToken(ctx, token);
  if (!found) throw errors.unauthorized('Unknown access token');
  if (found.expiresAtMs <= ctx.clock.nowMs()) throw errors.unauthorized('Access token expired; request a new one from POST /v1/auth/token');
  return {
    mode: 'bearer',
    programmeId: found.programmeId,
    apiKey: null,
    integrationType: null,
    userId: found.userId,
    scopes: found.scopes,
  };
}

/** Resolve the user a key acts for (docs/decisions.md#user-context). */
function userContext(ctx: AppContext, store: CredentialStore, request: FastifyRequest, key: SigningKey, policy: AuthPolicy): string | null {
  const userHeader = header(request, HEADER.userId);
  if (policy.user === 'programme') return null;
  if (key.integrationType === 'SINGLE_USER') {
    if (userHeader !== undefined) {
      throw new ServiceError(400, 'USER_ID_HEADER_NOT_ALLOWED', 'X-Service-User-Id must not be sent with a SINGLE_USER key; the key is bound to its user');
    }
    return key.userId;
  }
  if (userHeader === undefined && policy.user === 'user-or-programme') return null;
  if (!userHeader) {
    if (policy.user === 'user-or-programme') {
      throw new ServiceError(400, 'USER_ID_HEADER_REQUIRED', 'X-Service-User-Id is empty: name a user of the programme, or omit the header to act for the whole programme');
    }
    throw new ServiceError(400, 'USER_ID_HEADER_REQUIRED', 'X-Service-User-Id is required with a MULTI_USER key on this endpoint');
  }
  // the bounds the document declares (docs/authentication.md#hmac-headers-server-to-server): a 400, not a lookup's 403
  headerLengthCheck('X-Service-User-Id', userHeader, 1, 128);
  if (!store.isProgrammeUser(ctx, key.programmeId, userHeader)) throw errors.forbidden(`X-Service-User-Id ${userHeader} is not a user of this programme`);
  return userHeader;
}

function authenticate(ctx: AppContext, store: CredentialStore, request: FastifyRequest, policy: AuthPolicy): AuthContext {
  if (policy.modes.includes('none')) return NO_CREDENTIALS;
  if (policy.modes.includes('admin')) return verifyAdmin(ctx, request);
  const authorization = header(request, 'authorization');
  // interface 5: a request uses one mode. HMAC credentials next to an Authorization header are refused
  // rather than one of them being silently ignored (docs/decisions.md#one-mode-per-request).
  if (authorization !== undefined && HMAC_CREDENTIAL_HEADERS.some((name) => request.headers[name] !== undefined)) {
    throw errors.invalid(
      'Send one kind of credentials: an Authorization header (bearer token) or the X-Service-Api-Key, X-Service-Timestamp and X-Service-Signature HMAC headers, not both',
    );
  }
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw errors.unauthorized('Authorization header must be "Bearer <access token>"');
    if (!policy.modes.includes('bearer')) {
      throw errors.unauthorized('This endpoint accepts HMAC-signed requests only (X-Service-* headers); bearer tokens are not accepted');
    }
    const auth = verifyBearer(ctx, store, match[1]!);
    if (policy.scope && !auth.scopes.has(policy.scope)) {
      throw errors.forbidden(`Access token lacks the ${policy.scope} scope`);
    }
    return auth;
  }
  if (policy.modes.includes('payout')) {
    const key = verifySignedRequest(ctx, store, request, PAYOUT_FORMAT);
    return hmacContext(ctx, store, request, key, policy, 'payout');
  }
  if (header(request, HEADER.apiKey) === undefined) {
    throw errors.unauthorized(
      policy.modes.includes('bearer')
        ? 'Missing authentication: send Authorization: Bearer <token> or the X-Service-* HMAC headers'
        : 'Missing authentication: this endpoint takes the X-Service-* HMAC headers',
    );
  }
  const key = verifySignedRequest(ctx, store, request, HMAC_FORMAT);
  return hmacContext(ctx, store, request, key, policy, 'hmac');
}

const NO_CREDENTIALS: AuthContext = { mode: 'none', programmeId: '', apiKey: null, integrationType: null, userId: null, scopes: new Set() };
const ADMIN: AuthContext = { ...NO_CREDENTIALS, mode: 'admin' };

/** The control plane's policy: every /_emulator route but health and the dashboard's page and files. */
export const ADMIN_POLICY: AuthPolicy = { modes: ['admin'], user: 'programme' };
/** Routes that never take credentials. */
export const OPEN_POLICY: AuthPolicy = { modes: ['none'], user: 'programme' };

/**
 * Admin mode (docs/decisions.md#control-plane-open): no credentials unless `--admin-token` is set; then
 * `Authorization: Bearer <token>` or `X-Admin-Token`, compared in constant time.
 */
function verifyAdmin(ctx: AppContext, request: FastifyRequest): AuthContext {
  const token = ctx.config.adminToken;
  if (!token) return ADMIN;
  const given = header(request, 'x-admin-token') ?? /^Bearer\s+(.+)$/i.exec(header(request, 'authorization') ?? '')?.[1];
  const expected = Buffer.from(token);
  const buffer = Buffer.from(given ?? '');
  if (buffer.length !== expected.length || !timingSafeEqual(buffer, expected)) {
    throw errors.unauthorized('The control plane requires the admin token: Authorization: Bearer <ADMIN_TOKEN> or X-Admin-Token');
  }
  return ADMIN;
}

function hmacContext(ctx: AppContext, store: CredentialStore, request: FastifyRequest, key: SigningKey, policy: AuthPolicy, mode: 'hmac' | 'payout'): AuthContext {
  const scopes = store.entitlements(ctx, key.apiKey);
  // interface 7.3: 403 when the API key lacks the entitlement the endpoint needs
  if (policy.scope && !scopes.has(policy.scope)) {
    throw errors.forbidden(`API key lacks entitlement: this endpoint needs ${policy.scope}; the key is entitled to ${[...scopes].join(', ') || 'nothing'}`);
  }
  return {
    mode,
    programmeId: key.programmeId,
    apiKey: key.apiKey,
    integrationType: key.integrationType,
    userId: userContext(ctx, store, request, key, policy),
    scopes,
  };
}

/**
 * Gives every route with a `config.auth` policy its own preValidation hook, closed over the policy: a
 * route-level hook costs nothing on routes without one, and reading the policy back per request through
 * `request.routeOptions` builds a frozen object each time (measured: docs/benchmarks.md). Registered before the routes.
 */
export function registerAuth(app: FastifyInstance, config: Config, store: CredentialStore): void {
  app.addHook('onRoute', (route) => {
    const policy = route.config?.auth;
    if (!policy) return;
    const authHook = (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
      try {
        request.auth = authenticate(ctxOf(request), store, request, policy);
      } catch (error) {
        done(error as Error);
        return;
      }
      done();
    };
    // Admin mode needs no body: it is checked on arrival, before the body is read, so a refused control-plane
    // request is a 401 whatever its body. The other modes sign the body and run once it is parsed.
    if (policy.modes.includes('admin')) {
      const existing = route.onRequest;
      route.onRequest = existing === undefined ? [authHook] : [authHook, ...(Array.isArray(existing) ? existing : [existing])];
      return;
    }
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [authHook] : [authHook, ...(Array.isArray(existing) ? existing : [existing])];
  });
  // A control-plane path no route matches (an unknown path, or a method it does not take) answers only with
  // the admin token too, so the 404 or 405 says nothing of the control plane without it. No hook at all when
  // no token is set.
  if (config.adminToken) {
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.routeOptions.url !== undefined || !request.url.startsWith('/_emulator')) return done();
      try {
        request.auth = verifyAdmin(ctxOf(request), request);
      } catch (error) {
        done(error as Error);
        return;
      }
      done();
    });
  }
}

/** The authenticated context; routes with an auth policy always have one. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw errors.internal('route has no auth policy');
  return request.auth;
}

/** The user a user-scoped call acts for. */
export function userOf(request: FastifyRequest): Caller {
  const auth = authOf(request);
  if (!auth.userId) throw errors.internal('route is not user-scoped');
  return { programmeId: auth.programmeId, userId: auth.userId };
}

/** Who a `user-or-programme` call acts for: one user, or (userId null) the whole programme. */
export function scopeOf(request: FastifyRequest): CallerScope {
  const auth = authOf(request);
  return { programmeId: auth.programmeId, userId: auth.userId };
}
