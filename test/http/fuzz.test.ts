import t from 'tap';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { errorBodySchema } from '../../src/core/errors.js';
import { routeCatalog, type CatalogRoute } from '../../src/http/route-catalog.js';
import { AS_JANE, CREDENTIALS, buildTestApp, json, type Identity, type TestApp } from '../helper.js';
import { base64, signPayout } from '../helpers/funding.js';
import { changeCount, diffFingerprints, fingerprint, type Fingerprint } from '../helpers/db-state.js';

// Fuzzing (docs/robustness.md#fuzzing-testhttpfuzztestts): seeded fast-check against every route of the catalog. Random and
// mutated bodies, query strings, headers and paths; each answer must be
//   - never a 5xx;
//   - a non-2xx with the interface 7.1 error body (JSON, { message, errorCode?, validationErrors? } only);
//   - a 4xx (never a 2xx) for input that is certainly bad (broken credentials, malformed JSON, unknown path);
//   - with credentials that are valid for the route, never a 401 (so the fuzz reaches validation, not only auth);
//   - a rejection that leaves the database exactly as it was (fingerprint of every state table).
// The conformance hook of test/helper.ts checks every JSON answer against /openapi.json on top.
//
// Bounded: FUZZ_RUNS runs per route (default 60) from FUZZ_SEED (default fixed), about 3,700 requests in well under 15 s.

const SEED = Number(process.env.FUZZ_SEED ?? 9_2026_03);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
/** Only the routes whose "METHOD /url" contains this text (to replay one route's failure). */
const ONLY = process.env.FUZZ_ROUTE;
const MULTI: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };

// ---------------------------------------------------------------------------------------------------------
// Values

/** Percent-encode every byte outside the unreserved set (works for lone surrogates too). */
function pct(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

// Raw URL fragments that are ASCII (so they reach the server as sent) but malformed or tricky.
const RAW_GARBAGE = ['%', '%zz', '%C0%AF', '%00', '..', '%2e%2e', '%2F', '%2f..%2f', '~', '%FF%FE', ';', ',', '@', ':', '!', '$', "'", '(', ')', '*', '+', '=', '%E2%80%AE', '%F0%9F%92%A9', '%ED%A0%80', '%25'];

// WHATWG URL parsing (light-my-request, fetch) percent-encodes a raw ' in a query, so the server would see
// another target than the one signed: queries take the rest raw.
const RAW_QUERY_GARBAGE = RAW_GARBAGE.filter((fragment) => fragment !== "'");

const interestingStrings = fc.constantFrom(
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '1e3',
  'NaN',
  'Infinity',
  '9'.repeat(40),
  'null',
  'true',
  '[]',
  '{}',
  '１２３',
  '１.００',
  '0x10',
  '-0.00',
  '100.000000001',
  '2026-02-30',
  '2026-03-01T25:00:00Z',
  '2026-03-01T12:00:00+14:00',
  '9999-12-31T23:59:59.999Z',
  '0000-01-01',
  'ACTIVE',
  'CREATED_AT',
  'asc',
  'PDF',
  'csv',
  '__proto__',
  'constructor',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '\u0000',
  '\u202e\u0041',
  '💩',
  'ｆｕｌｌｗｉｄｔｈ',
  '\ud800',
  'a'.repeat(300),
);

const randomText = fc.oneof(
  { weight: 3, arbitrary: interestingStrings },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
);

const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

const replacementValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: randomText },
  { weight: 2, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, Number.MAX_SAFE_INTEGER + 2, [], {}, [1, 'a'], { a: { b: {} } }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(70_000), 'é'.repeat(5_000)) },
);

type Json = unknown;

/** Every path into a JSON value (the root included). */
function pathsOf(value: Json, prefix: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((item, index) => pathsOf(item, [...prefix, index], out));
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) pathsOf(item, [...prefix, key], out);
  return out;
}

type Mutation = { pick: number; op: 'set' | 'delete' | 'add'; key: string; value: unknown };

function applyMutation(value: Json, mutation: Mutation): Json {
  const paths = pathsOf(value);
  const path = paths[mutation.pick % paths.length]!;
  const root = structuredClone(value);
  if (path.length === 0) {
    if (mutation.op === 'add' && root !== null && typeof root === 'object' && !Array.isArray(root)) {
      (root as Record<string, unknown>)[mutation.key] = mutation.value;
      return root;
    }
    return mutation.op === 'delete' ? undefined : mutation.value;
  }
  let parent: any = root;
  for (const key of path.slice(0, -1)) parent = parent[key];
  const last = path[path.length - 1]!;
  if (mutation.op === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else if (mutation.op === 'add' && parent[last] !== null && typeof parent[last] === 'object' && !Array.isArray(parent[last])) {
    parent[last][mutation.key] = mutation.value;
  } else {
    parent[last] = mutation.value;
  }
  return root;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  op: fc.constantFrom('set', 'set', 'delete', 'add'),
  key: fc.oneof(fc.constantFrom('extra', '__proto__', 'constructor', 'id', 'amount', ''), fc.string({ maxLength: 12 })),
  value: replacementValue,
});

/** A JSON body as text: valid sample, mutated sample, random JSON, or text that is not JSON at all. */
function jsonBody(sample: Json | undefined): fc.Arbitrary<{ text: string | undefined; malformed: boolean }> {
  const asText = (value: Json) => ({ text: value === undefined ? undefined : JSON.stringify(value), malformed: false });
  const options: Array<fc.WeightedArbitrary<{ text: string | undefined; malformed: boolean }>> = [
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map(asText) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('{', '{"a":}', 'undefined', 'NaN', "{'a':1}", '\u0000', '{"a":1,}', '[1,2', '{"a":1}{"b":2}', '\ufeff{}', '01', '{"a":"\\x41"}', 'nul')
        .map((text) => ({ text, malformed: true })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(deepObject(20_000), deepArray(50_000), deepObject(200), JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }))
        .map((text) => ({ text, malformed: false })),
    },
    { weight: 1, arbitrary: fc.constant({ text: undefined, malformed: false }) },
    { weight: 1, arbitrary: fc.constant({ text: '', malformed: false }) },
  ];
  if (sample !== undefined) {
    options.push({ weight: 3, arbitrary: fc.constant(asText(sample)) });
    options.push({
      weight: 6,
      arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((mutations) => asText(mutations.reduce(applyMutation, sample))),
    });
    // the same key twice: JSON.parse keeps the last one
    if (sample && typeof sample === 'object' && !Array.isArray(sample)) {
      const [firstKey] = Object.keys(sample);
      if (firstKey) {
        options.push({
          weight: 1,
          arbitrary: replacementValue.map((value) => ({ text: `{${JSON.stringify(firstKey)}:${JSON.stringify(value) ?? 'null'},${JSON.stringify(sample).slice(1)}`, malformed: false })),
        });
      }
    }
  }
  return fc.oneof(...options);
}

const QUERY_KEYS = [
  'pageSize',
  'pageIndex',
  'sortBy',
  'sortDirection',
  'accountId',
  'minUpdatedAt',
  'maxUpdatedAt',
  'minCreatedAt',
  'type',
  'status',
  'format',
  'startDate',
  'endDate',
  'limit',
  'since',
  'method',
  'pathPrefix',
  'expires',
  'signature',
  'programId',
  'eventType',
  'transactionId',
  'selected',
  '__proto__',
  'constructor[prototype][x]',
  'a[b]',
  'a[]',
];

/** A query string (without `?`): the route's sample, or random keys and values, repeated keys, garbage. */
function queryString(sample: string): fc.Arbitrary<string> {
  const key = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...QUERY_KEYS) }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }).map(pct) });
  const value = fc.oneof(
    { weight: 4, arbitrary: randomText.map(pct) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERY_GARBAGE) },
    { weight: 1, arbitrary: fc.integer({ min: -5, max: 300 }).map(String) },
  );
  const pairs = fc.array(fc.tuple(key, value), { maxLength: 6 }).map((items) => items.map(([k, v]) => `${k}=${v}`).join('&'));
  const sampleMutated = fc.tuple(pairs, fc.boolean()).map(([extra, before]) => [before ? extra : sample, before ? sample : extra].filter(Boolean).join('&'));
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(sample) },
    { weight: 3, arbitrary: pairs },
    { weight: 2, arbitrary: sampleMutated },
    { weight: 1, arbitrary: fc.constantFrom('&&&', '=', '==', '&=&', 'pageSize', 'pageSize=1&pageSize=2', 'sortBy=TYPE&sortBy=STATUS', '%', '%zz=1', 'a=%', `x=${'y'.repeat(5000)}`) },
  );
}

// ---------------------------------------------------------------------------------------------------------
// Requests

type AuthKind =
  | 'valid'
  | 'missing'
  | 'badSignature'
  | 'staleTimestamp'
  | 'wrongSecret'
  | 'unknownKey'
  | 'bearerValid'
  | 'bearerGarbage'
  | 'bearerNoScope'
  | 'otherProgramme'
  | 'multiNoUser'
  | 'multiUnknownUser'
  | 'singleWithUser'
  | 'janeMulti'
  | 'randomHeaders';

// Credentials that no route may accept (401/403/400 whatever the rest of the request).
const CERTAINLY_BAD: ReadonlySet<AuthKind> = new Set(['missing', 'badSignature', 'staleTimestamp', 'wrongSecret', 'unknownKey', 'bearerGarbage', 'otherProgramme', 'randomHeaders']);

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
  /** Why the request must be refused with a 4xx, when it certainly must. */
  certainlyBad: string | null;
  /** Credentials valid for the route: a 401 means the fuzz never got past auth. */
  validAuth: boolean;
}

interface RouteSample {
  params?: Record<string, string>;
  query?: string;
  body?: Json;
}

interface Fixture {
  sandbox: TestApp;
  plausible: Record<string, string[]>;
  samples: Record<string, RouteSample>;
  bearer: string;
  bearerReadOnly: string;
}

const KNOWN_PARAMS: Record<string, string[]> = {
  accountId: ['acct_acme_usd', 'acct_acme_eur', 'acct_acme_usdc', 'acct_acme_gbp', 'acct_jane_usd', 'acct_other_usd', 'acct_acme_usdc_eth'],
  transactionId: ['txn_hist_acme_usd_001', 'txn_hist_acme_usdc_001s', 'txn_hist_jane_001'],
  beneficiaryId: ['ben_globex', 'ben_mueller', 'ben_john'],
  userId: ['usr_acme', 'usr_jane', 'usr_other'],
  format: ['json', 'pacs008', 'JSON', 'xml'],
};

function pathParam(fixture: Fixture, name: string): fc.Arbitrary<string> {
  const plausible = fixture.plausible[name] ?? [];
  return fc.oneof(
    { weight: plausible.length > 0 ? 6 : 0, arbitrary: plausible.length > 0 ? fc.constantFrom(...plausible) : fc.constant('x') },
    { weight: 2, arbitrary: randomText.filter((text) => text.length > 0).map(pct) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_GARBAGE) },
    { weight: 1, arbitrary: fc.constantFrom('x'.repeat(129), 'acct_'.repeat(300), '%41'.repeat(400)) },
  );
}

/** No credentials needed: an open route, or the control plane's admin mode (the fuzzed app has no --admin-token). */
function takesNoCredentials(policy: CatalogRoute['auth']): boolean {
  return !policy || policy.modes.includes('none') || policy.modes.includes('admin');
}

function defaultAuthFor(route: CatalogRoute): Identity | 'none' | 'payout' {
  const policy = route.auth;
  if (takesNoCredentials(policy)) return 'none';
  if (!policy) return 'none';
  if (policy.modes.includes('payout')) return 'payout';
  if (route.url === '/v1/auth/users') return MULTI;
  return {};
}

function authHeaders(fixture: Fixture, route: CatalogRoute, kind: AuthKind, method: string, url: string, payload: string): Record<string, string> {
  const base = defaultAuthFor(route);
  const sandbox = fixture.sandbox;
  const hmac = (as: Identity) => sandbox.sign(method, url, payload, as);
  const payout = (as: Identity, timestamp?: string) => signPayout(url, payload, as, timestamp);
  const valid = (as: Identity) => (base === 'payout' ? payout(as) : hmac(as));
  const asDefault: Identity = base === 'none' || base === 'payout' ? {} : base;
  switch (kind) {
    case 'valid':
      return base === 'none' ? {} : valid(asDefault);
    case 'missing':
      return {};
    case 'badSignature': {
      const headers = valid(asDefault);
      headers['x-service-signature'] = base === 'payout' ? `sha256=${'ab'.repeat(32)}` : 'ab'.repeat(32);
      return headers;
    }
    case 'staleTimestamp':
      return base === 'payout'
        ? payout(asDefault, new Date(Date.now() - 600_000).toISOString())
        : hmac({ ...asDefault, timestamp: String(Date.now() - 120_000) });
    case 'wrongSecret':
      return valid({ ...asDefault, secret: 'not-the-secret' });
    case 'unknownKey':
      return valid({ ...asDefault, apiKey: 'pk_nobody_here', secret: 'x' });
    case 'bearerValid':
      return { authorization: `Bearer ${fixture.bearer}` };
    case 'bearerNoScope':
      return { authorization: `Bearer ${fixture.bearerReadOnly}` };
    case 'bearerGarbage':
      return { authorization: `Bearer sbx_at_${'A'.repeat(32)}` };
    case 'otherProgramme':
      return valid({ ...asDefault, programmeId: 'prg_other' });
    case 'multiNoUser':
      return valid(MULTI);
    case 'multiUnknownUser':
      return valid({ ...MULTI, userId: 'usr_nobody' });
    case 'singleWithUser':
      return valid({ userId: 'usr_acme' });
    case 'janeMulti':
      return valid(AS_JANE);
    case 'randomHeaders':
      return {
        'x-service-api-key': 'k'.repeat(20),
        'x-service-timestamp': 'yesterday',
        'x-service-program-id': '',
        'x-service-signature': 'sha256=zz',
        'x-service-user-id': '💩',
      };
  }
}

const CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  'APPLICATION/JSON',
  'garbage/!!',
  'application/json, text/plain',
  'application/octet-stream',
];

const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/).filter((name) => !/^(x-service-|authorization|content-|host$|transfer-encoding|expect|connection|upgrade|x-admin-token|idempotency-key|te$|trailer)/.test(name));
const headerValue = fc.stringMatching(/^[\x21-\x7e]{0,60}$/);
const specialHeaders = fc.constantFrom<Record<string, string>>(
  { accept: 'text/html' },
  { accept: '*/*;q=0.1' },
  { 'accept-encoding': 'gzip, br' },
  { 'content-encoding': 'gzip' },
  { 'x-http-method-override': 'DELETE' },
  { 'x-forwarded-for': '1.2.3.4, ::1' },
  { 'x-forwarded-host': 'evil.example' },
  { cookie: 'a=b; c' },
  { range: 'bytes=0-1' },
);
const extraHeaders = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Record<string, string>>({}) },
  { weight: 1, arbitrary: fc.dictionary(headerName, headerValue, { maxKeys: 4 }) },
  { weight: 1, arbitrary: specialHeaders },
);

function routeKey(route: CatalogRoute): string {
  return `${route.method} ${route.url}`;
}

function requestFor(fixture: Fixture, route: CatalogRoute): fc.Arbitrary<FuzzRequest> {
  const sample = fixture.samples[routeKey(route)] ?? {};
  const paramNames = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);
  const params = fc.tuple(
    ...paramNames.map((name) =>
      sample.params?.[name] ? fc.oneof({ weight: 3, arbitrary: fc.constant(sample.params[name]!) }, { weight: 2, arbitrary: pathParam(fixture, name) }) : pathParam(fixture, name),
    ),
  );
  const wildcard = fc.oneof(fc.constantFrom('', 'index.css', '../package.json', '..%2f..%2fpackage.json', '%00', 'swagger-ui.css'), fc.string({ maxLength: 30 }).map(pct));
  const isPayout = route.auth?.modes.includes('payout') ?? false;
  const hasJsonBody = Boolean(route.schema?.body) && !isPayout;
  const body = isPayout ? payoutBody() : hasJsonBody ? jsonBody(sample.body) : fc.oneof({ weight: 6, arbitrary: fc.constant({ text: undefined, malformed: false }) }, { weight: 1, arbitrary: jsonBody(undefined) });
  const requiresAuth = !takesNoCredentials(route.auth);
  const authKinds: AuthKind[] = requiresAuth
    ? ['missing', 'badSignature', 'staleTimestamp', 'wrongSecret', 'unknownKey', 'bearerGarbage', 'otherProgramme', 'randomHeaders', 'multiNoUser', 'multiUnknownUser', 'singleWithUser', 'janeMulti', 'bearerValid', 'bearerNoScope']
    : ['missing', 'randomHeaders', 'bearerGarbage'];
  const auth = fc.oneof({ weight: 5, arbitrary: fc.constant<AuthKind>('valid') }, { weight: 2, arbitrary: fc.constantFrom(...authKinds) });
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant<string | null>(isPayout ? 'text/plain' : 'application/json') },
    { weight: 1, arbitrary: fc.constant<string | null>(null) },
    { weight: 2, arbitrary: fc.constantFrom<string | null>(...CONTENT_TYPES) },
  );
  const idempotencyKey = isPayout
    ? fc.oneof(
        { weight: 5, arbitrary: fc.uuid().map((uuid) => `fuzz-${uuid}`) },
        { weight: 2, arbitrary: fc.constantFrom<string | null>(null, 'short', 'k'.repeat(129), 'fuzz-reused-key-1', '😀😀😀😀😀😀😀😀') },
      )
    : fc.constant<string | null>(null);

  return fc
    .record({
      params,
      wildcard,
      query: queryString(sample.query ?? ''),
      body,
      auth,
      contentType,
      extra: extraHeaders,
      idempotencyKey,
    })
    .map(({ params: values, wildcard: tail, query, body: chosenBody, auth: kind, contentType: type, extra, idempotencyKey: key }) => {
      let index = 0;
      const path = route.url
        .replace(/:([A-Za-z0-9_]+)/g, () => values[index++]!)
        .replace(/\*$/, tail);
      const url = query ? `${path}?${query}` : path;
      const payload = chosenBody.text;
      const headers: Record<string, string> = { ...extra };
      // Fastify never reads a GET body, so the server signs over none: so does a client that sends one anyway.
      const signedBody = route.method === 'GET' ? '' : (payload ?? '');
      Object.assign(headers, authHeaders(fixture, route, kind, route.method, url, signedBody));
      if (payload !== undefined && type !== null) headers['content-type'] = type;
      if (key !== null) headers['idempotency-key'] = key;
      const reasons: string[] = [];
      if (requiresAuth && CERTAINLY_BAD.has(kind)) reasons.push(`credentials: ${kind}`);
      if (requiresAuth && kind === 'multiUnknownUser' && route.auth?.user !== 'programme') reasons.push('unknown X-Service-User-Id');
      if (chosenBody.malformed && hasJsonBody && type === 'application/json') reasons.push('malformed JSON body');
      const validAuth = requiresAuth && (kind === 'valid' || (kind === 'bearerValid' && (route.auth?.modes.includes('bearer') ?? false)));
      return { method: route.method, url, headers, payload, certainlyBad: reasons.length > 0 ? reasons.join(', ') : null, validAuth };
    });
}

/** The payout endpoint's body: Base64 text of a json or pacs.008 payload, mutated, or not Base64 at all. */
function payoutBody(): fc.Arbitrary<{ text: string | undefined; malformed: boolean }> {
  const payload = { entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '1.00', currency: 'USD', reference: 'FUZZ' };
  const xml = (inner: string) =>
    `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><FIToFICstmrCdtTrf>${inner}</FIToFICstmrCdtTrf></Document>`;
  const laughs =
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
    '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><FIToFICstmrCdtTrf><GrpHdr><MsgId>&lol3;</MsgId></GrpHdr></FIToFICstmrCdtTrf></Document>';
  const wrap = (text: string) => ({ text, malformed: false });
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(wrap(base64(JSON.stringify(payload)))) },
    { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((mutations) => wrap(base64(JSON.stringify(mutations.reduce(applyMutation, payload)) ?? ''))) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 0, maxLength: 200 }).map((bytes) => wrap(Buffer.from(bytes).toString('base64'))) },
    { weight: 1, arbitrary: randomText.map((text) => wrap(text)) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          xml(''),
          xml('<GrpHdr><MsgId>M1</MsgId></GrpHdr><CdtTrfTxInf><IntrBkSttlmAmt Ccy="USD">abc</IntrBkSttlmAmt></CdtTrfTxInf>'),
          xml('<GrpHdr><MsgId>M1</MsgId></GrpHdr><CdtTrfTxInf><IntrBkSttlmAmt Ccy="USD">1.00</IntrBkSttlmAmt><DbtrAcct><Id><Othr><Id>acct_acme_usd</Id></Othr></Id></DbtrAcct></CdtTrfTxInf>'),
          laughs,
          '<Document xmlns="urn:wrong"/>',
          '<<<>>>',
          `${'<a>'.repeat(5000)}${'</a>'.repeat(5000)}`,
        )
        .map((text) => wrap(base64(text))),
    },
    { weight: 1, arbitrary: fc.constantFrom(wrap(''), { text: undefined, malformed: false }, wrap('A'.repeat(2 * 1024 * 1024))) },
  );
}

// ---------------------------------------------------------------------------------------------------------
// Checks

async function send(sandbox: TestApp, request: FuzzRequest): Promise<LightMyRequestResponse> {
  return sandbox.app.inject({
    method: request.method as InjectOptions['method'],
    url: request.url,
    headers: request.headers,
    payload: request.payload,
  });
}

function describe(request: FuzzRequest, response: LightMyRequestResponse): string {
  const payload = request.payload === undefined ? '(none)' : request.payload.length > 300 ? `${request.payload.slice(0, 300)}... (${request.payload.length} chars)` : request.payload;
  return `${request.method} ${request.url.slice(0, 400)}\n  headers: ${JSON.stringify(request.headers).slice(0, 600)}\n  payload: ${payload}\n  -> ${response.statusCode} ${response.body.slice(0, 400)}`;
}

interface Stats {
  byStatus: Map<number, number>;
  requests: number;
}

/** Send one request and return what is wrong with the answer (null when nothing). Updates `state.before`. */
async function exercise(fixture: Fixture, state: { before: Fingerprint }, stats: Stats, request: FuzzRequest): Promise<string | null> {
  const { sandbox } = fixture;
  const mismatchesBefore = sandbox.conformance.mismatches.length;
  const sentAt = Date.now();
  const changesBefore = changeCount(sandbox.ctx.db);
  const response = await send(sandbox, request);
  if (process.env.FUZZ_DEBUG) t.comment(`${Date.now() - sentAt} ms ${response.statusCode} ${response.body.length} B ${request.method} ${request.url.slice(0, 120)}`);
  stats.requests += 1;
  stats.byStatus.set(response.statusCode, (stats.byStatus.get(response.statusCode) ?? 0) + 1);
  // No row written (SQLite's change counter did not move): the fingerprint is the one from before.
  const after = changeCount(sandbox.ctx.db) === changesBefore ? state.before : fingerprint(sandbox.ctx.db);
  const problems: string[] = [];
  const status = response.statusCode;
  if (status >= 500) problems.push(`a ${status} answer`);
  if (status >= 400 && request.method !== 'HEAD') {
    if (!/^application\/json/.test(String(response.headers['content-type'] ?? ''))) problems.push(`error answer with content-type ${String(response.headers['content-type'])}`);
    else {
      let body: unknown;
      try {
        body = json(response);
      } catch {
        body = undefined;
      }
      const parsed = errorBodySchema.strict().safeParse(body);
      if (!parsed.success) problems.push(`error body is not { message, errorCode?, validationErrors? }: ${parsed.error.message.slice(0, 300)}`);
    }
  }
  if (status >= 400) {
    const changed = diffFingerprints(state.before, after);
    if (changed.length > 0) problems.push(`the rejected request changed the database: ${changed.join(', ')}`);
  }
  if (request.certainlyBad && (status < 400 || status >= 500)) problems.push(`certainly bad input (${request.certainlyBad}) answered ${status}, not a 4xx`);
  if (request.validAuth && status === 401) problems.push('valid credentials were refused (401): the fuzz does not reach validation');
  if (sandbox.conformance.mismatches.length > mismatchesBefore) {
    const mismatch = sandbox.conformance.mismatches[sandbox.conformance.mismatches.length - 1]!;
    problems.push(`response does not match /openapi.json (${mismatch.documented}): ${mismatch.problem}`);
  }
  state.before = after;
  return problems.length > 0 ? `${problems.join('; ')}\n${describe(request, response)}` : null;
}

/**
 * Run a property with a fixed seed; the first failure's own message (the request and answer) plus how to
 * replay it, or null. No shrinking: every request changes the sandbox's state, so a shrunk case would not
 * replay the same way; the seed and path do.
 */
async function firstFailure(property: fc.IAsyncProperty<any>, seed: number, numRuns: number): Promise<string | null> {
  const details = await fc.check(property, { seed, numRuns, endOnFailure: true });
  if (!details.failed) return null;
  const message = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return `${message}\n(replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}; property seed ${seed}, path ${details.counterexamplePath})`;
}

// ---------------------------------------------------------------------------------------------------------
// Setup: a sandbox with a few real ids to aim at

async function setup(): Promise<Fixture> {
  // A short webhook timeout: a fuzzed replay must never wait 10 s on an unreachable address.
  // A small journal: GET /_emulator/requests answers every entry with its request and response bodies
  // (each parsed whole up to 256 KiB, e.g. the 200 KB /openapi.json), so with the default 1,000 entries each
  // fuzzed read of it would serialize tens of megabytes. Ten entries still wrap the ring buffer often.
  const sandbox = await buildTestApp({ config: { webhookTimeoutMs: 200, journalSize: 10 } });
  const must = async (response: Promise<LightMyRequestResponse>, status: number) => {
    const result = await response;
    if (result.statusCode !== status) throw new Error(`setup: expected ${status}, got ${result.statusCode}: ${result.body}`);
    return json(result);
  };
  const bearer = (await must(sandbox.request('POST', '/v1/auth/token', {}), 200)).accessToken as string;
  const bearerReadOnly = (await must(sandbox.request('POST', '/v1/auth/token', { scopes: ['enrollment:read'] }), 200)).accessToken as string;
  const user = await must(sandbox.request('POST', '/v1/auth/users', { externalId: 'fuzz-user', type: 'PERSON', name: 'Fuzz Person' }, MULTI), 201);
  const enrollment = await must(sandbox.request('GET', '/v1/enrollment', undefined, { ...MULTI, userId: user.userId }), 200);
  const intent = await must(
    sandbox.request('POST', '/v1/transaction-intents', {
      idempotencyKey: 'fuzz-intent-1',
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
      creditAmount: '10.00',
    }),
    201,
  );
  const delivery = await must(sandbox.app.inject({ method: 'POST', url: '/_emulator/webhooks/trigger', payload: { transactionId: 'txn_hist_acme_usd_001', eventType: 'transaction_created' } }), 202);
  const link = await must(sandbox.request('GET', '/v1/accounts/acct_acme_usd/statement?startDate=2026-02-01&endDate=2026-02-28&format=csv'), 200);
  const fileUrl = new URL(link.url as string);
  const fileId = fileUrl.pathname.split('/').pop()!;

  const plausible: Record<string, string[]> = {
    ...KNOWN_PARAMS,
    transactionId: [...KNOWN_PARAMS.transactionId!],
    transactionIntentId: [intent.id, 'ti_nope'],
    informationRequestId: [enrollment.informationRequest.id],
    userId: [...KNOWN_PARAMS.userId!, user.userId],
    id: [delivery.id, delivery.eventId ?? delivery.id],
    fileId: [fileId],
  };
  const intentKey = 'fuzz-intent-1';
  const samples: Record<string, RouteSample> = {
    'GET /v1/accounts': { query: 'pageSize=2' },
    'GET /v1/accounts/:accountId/statement': { params: { accountId: 'acct_acme_usd' }, query: 'startDate=2026-02-01&endDate=2026-02-28' },
    'GET /v1/statement-files/:fileId': { params: { fileId }, query: fileUrl.search.slice(1) },
    'GET /v1/transactions': { query: 'pageSize=5&sortBy=UPDATED_AT&sortDirection=ASC&minUpdatedAt=2026-01-01T00:00:00Z' },
    'GET /v1/users': { query: 'pageSize=5' },
    'POST /v1/auth/token': { body: { scopes: ['accounts:read'] } },
    'POST /v1/auth/users': { body: { externalId: 'fuzz-user-2', type: 'BUSINESS', name: 'Fuzz Business', email: 'fuzz@example.com' } },
    'POST /v1/accounts/:accountId/deposit-instructions': { params: { accountId: 'acct_acme_usd' }, body: { name: 'Fuzz instruction', idempotencyKey: 'fuzz-di-1' } },
    'POST /v1/sandbox/accounts/:accountId/deposits': {
      params: { accountId: 'acct_acme_usd' },
      body: { depositInstructionId: 'di_acme_usd_ach', amount: '12.34', reference: 'FUZZ-REF', counterpartyName: 'Fuzz Payer' },
    },
    'POST /v1/beneficiaries': {
      body: {
        type: 'BUSINESS',
        businessName: 'Fuzz Supplies LLC',
        email: 'ap@fuzz.example',
        phoneNumber: '+14155550100',
        address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
        instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Fuzz Supplies LLC', accountNumber: '987654321012', routingNumber: '021000021' }],
      },
    },
    'POST /v1/transaction-intents': {
      body: {
        idempotencyKey: 'fuzz-intent-2',
        debitAccountId: 'acct_acme_usd',
        credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' },
        debitAmount: '5.00',
        purpose: 'PAYMENT_FOR_SERVICES',
        debitMemo: 'fuzz',
      },
    },
    'POST /v1/transaction-intents/:transactionIntentId/commit': { params: { transactionIntentId: intent.id }, body: { idempotencyKey: intentKey } },
    'POST /v1/transaction-intents/:transactionIntentId/cancel': { params: { transactionIntentId: intent.id } },
    'GET /v1/transaction-intents': { query: 'pageSize=3' },
    'POST /v1/information-requests/:informationRequestId/entries': {
      params: { informationRequestId: enrollment.informationRequest.id },
      body: { entries: [{ key: 'legalName', value: 'Fuzz Person' }, { key: 'dateOfBirth', value: '1990-01-01' }, { key: 'address', value: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' } }] },
    },
    'POST /_emulator/clock': { body: { advanceMs: 1000 } },
    'POST /_emulator/transactions/:transactionId/status': { params: { transactionId: 'txn_hist_acme_usd_001' }, body: { status: 'COMPLETED' } },
    'PUT /_emulator/webhooks/endpoint': { body: { url: null, programId: 'prg_other' } },
    'GET /_emulator/webhooks/endpoint': { query: 'programId=prg_sandbox' },
    'PUT /_emulator/webhooks/chaos': { body: { seed: 'fuzz', duplicate: { times: 1 }, delay: { probability: 0.5, minMs: 1, maxMs: 5 }, burst: { times: 2, size: 3, windowMs: 50 } } },
    'GET /_emulator/webhooks/deliveries': { query: 'status=SKIPPED&eventType=transaction_created' },
    'GET /_emulator/jobs': { query: 'status=FAILED&type=transaction.rail-step&pageSize=10' },
    'POST /_emulator/webhooks/trigger': { body: { transactionId: 'txn_hist_acme_usd_002', eventType: 'transaction_status_updated' } },
    // port 9 refuses at once: a fuzzed check never waits on its timeout (docs/faults.md#receiver-check)
    'POST /_emulator/webhooks/check': { query: 'format=json', body: { url: 'http://127.0.0.1:9/webhooks', timeoutMs: 100 } },
    'POST /_emulator/act-as': { body: { userId: 'usr_acme', method: 'GET', path: '/v1/accounts?pageSize=1' } },
    'POST /_emulator/information-requests/:informationRequestId/decision': { params: { informationRequestId: enrollment.informationRequest.id }, body: { decision: 'APPROVED' } },
    'POST /_emulator/enrollment/:userId/revoke': { params: { userId: user.userId }, body: { reasonDetail: 'fuzz' } },
    'GET /_emulator/transactions': { query: 'limit=3&accountId=acct_acme_usd' },
    'GET /_emulator/ui/state': { query: 'limit=2&selected=txn_hist_acme_usd_001' },
    'GET /_emulator/transactions/:transactionId/story': { params: { transactionId: 'txn_hist_acme_usd_001' } },
    'GET /_emulator/accounts/:accountId/balance-history': { params: { accountId: 'acct_acme_usd' }, query: 'from=2026-02-01T00:00:00Z&to=2026-03-01T12:00:00Z' },
    'GET /_emulator/users/:userId/journey': { params: { userId: 'usr_acme' }, query: 'limit=5' },
    'POST /_emulator/demo/steps/:number': { params: { number: '1' } },
    'POST /_emulator/scenario/steps/:number': { params: { number: '1' } },
    'GET /_emulator/requests': { query: 'method=get&limit=2' },
    // a rule that matches no fuzzed path: mutations of it may match more, and reset (fuzzed last) clears them
    'POST /_emulator/faults': { body: { match: { method: 'GET', path: '/v1/fuzz/never/**' }, effect: { type: 'latency', ms: 0 }, times: 1 } },
  };
  return { sandbox, plausible, samples, bearer, bearerReadOnly };
}

async function issueTokens(fixture: Fixture): Promise<void> {
  const issue = async (body: unknown) => {
    const response = await fixture.sandbox.request('POST', '/v1/auth/token', body);
    if (response.statusCode !== 200) throw new Error(`token: ${response.statusCode} ${response.body}`);
    return json(response).accessToken as string;
  };
  fixture.bearer = await issue({});
  fixture.bearerReadOnly = await issue({ scopes: ['enrollment:read'] });
}

// ---------------------------------------------------------------------------------------------------------

t.test('fuzz every route: no 5xx, error bodies, 4xx for bad input, rejected requests change nothing', async (t) => {
  const fixture = await setup();
  t.teardown(fixture.sandbox.close);
  // Reset last: it ends every token and every id the other routes aim at.
  const isReset = (route: CatalogRoute) => route.url === '/_emulator/reset';
  // The dashboard's event stream stays open until the client leaves, which app.inject never does; its refusals and
  // its stream are tested over a real listener (test/emulator/dashboard-events.test.ts, docs/dashboard.md#live-updates).
  const isStream = (route: CatalogRoute) => route.url === '/_emulator/ui/events';
  const routes = routeCatalog(fixture.sandbox.app)
    .filter((route) => route.method !== 'HEAD' && !isStream(route) && (!ONLY || routeKey(route).includes(ONLY)))
    .sort((a, b) => Number(isReset(a)) - Number(isReset(b)));
  t.ok(ONLY ? routes.length > 0 : routes.length >= 40, `${routes.length} routes to fuzz`);
  const stats: Stats = { byStatus: new Map(), requests: 0 };
  const state = { before: fingerprint(fixture.sandbox.ctx.db) };
  const started = Date.now();

  for (const [index, route] of routes.entries()) {
    const label = routeKey(route);
    // Fresh tokens for each route: a fuzzed POST /_emulator/clock may have moved time past their hour.
    await issueTokens(fixture);
    state.before = fingerprint(fixture.sandbox.ctx.db);
    const routeStarted = Date.now();
    const failure = await firstFailure(
      fc.asyncProperty(requestFor(fixture, route), async (request) => {
        const problem = await exercise(fixture, state, stats, request);
        if (problem) throw new Error(problem);
      }),
      SEED + index,
      RUNS,
    );
    if (failure) t.fail(label, { diagnostic: true, failure: failure.slice(0, 4000) });
    else t.pass(`${label}: ${RUNS} fuzzed requests in ${Date.now() - routeStarted} ms`);
  }

  await t.test('random paths and methods: 404 or 405 with the error body, nothing written', async (t) => {
    const segment = fc.oneof(
      fc.constantFrom('v1', '_emulator', 'accounts', 'transactions', 'docs', 'openapi.json', 'deposits', 'acct_acme_usd', '..', '.', '', 'statement', 'v2'),
      fc.constantFrom(...RAW_GARBAGE),
      randomText.map(pct),
    );
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD');
    const failure = await firstFailure(
      fc.asyncProperty(method, fc.array(segment, { minLength: 1, maxLength: 6 }), queryString(''), async (chosenMethod, segments, query) => {
        const path = `/${segments.join('/')}`;
        const url = query ? `${path}?${query}` : path;
        // the URL parser of the client resolves dot segments (/docs/. is /docs/) before the server sees it
        const normalized = URL.canParse(path, 'http://localhost') ? new URL(path, 'http://localhost').pathname : path;
        const known = routeCatalog(fixture.sandbox.app).some((route) => route.pattern.test(path) || route.pattern.test(normalized));
        const request: FuzzRequest = {
          method: chosenMethod,
          url,
          headers: fixture.sandbox.sign(chosenMethod, url),
          payload: undefined,
          certainlyBad: known ? null : 'unknown path',
          validAuth: false,
        };
        const problem = await exercise(fixture, state, stats, request);
        if (problem) throw new Error(problem);
      }),
      SEED - 1,
      RUNS * 5,
    );
    if (failure) t.fail('random paths', { diagnostic: true, failure: failure.slice(0, 4000) });
    else t.pass(`random paths: ${RUNS * 5} fuzzed requests`);
  });

  const summary = [...stats.byStatus.entries()].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(', ');
  t.comment(`${stats.requests} fuzzed requests in ${Date.now() - started} ms (seed ${SEED}, ${RUNS} runs per route); statuses ${summary}`);
});
