import { createHash } from 'node:crypto';
import { channel } from 'node:diagnostics_channel';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// Response conformance (docs/robustness.md#response-conformance-every-test): every JSON response a test produces is
// validated against the app's own published OpenAPI document (/openapi.json, i.e. `app.swagger()`), so the document and
// the server cannot drift. The check runs as an onSend hook on every app built by test/helper.ts (buildTestApp);
// mismatches are collected and the helper's close() fails the test with the route, status and ajv errors.
//
// OpenAPI 3.1 schemas are JSON Schema 2020-12: one Ajv2020 instance holds the document's components as one
// schema (`urn:service-sandbox:openapi`), every `#/components/...` reference is rewritten to point into it,
// and each (route, method, status) response schema is compiled on first use.

export interface ConformanceMismatch {
  method: string;
  /** OpenAPI path template (`/v1/accounts/{accountId}`), or the request URL when no route matched. */
  route: string;
  url: string;
  status: number;
  /** The document key used: the status itself, `default`, or `ServiceError` for unmatched routes. */
  documented: string;
  problem: string;
  body: string;
}

type Json = Record<string, any>;

// ajv-formats is CommonJS: under NodeNext its default import is the module object, whose default is the plugin.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

const COMPONENTS_ID = 'urn:service-sandbox:openapi';
const MAX_BODY_IN_REPORT = 600;

/** Validators for one OpenAPI document; shared between apps that publish the same document. */
export class ConformanceChecker {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction | null>();
  private readonly paths: Json;

  constructor(document: Json) {
    const rewritten = rewriteRefs(structuredClone(document)) as Json;
    this.paths = rewritten.paths ?? {};
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    // zod emits a few format names that are not JSON Schema formats (e.g. `starts_with` on a request
    // parameter); they say nothing about responses, so accept them rather than fail compilation.
    for (const format of collectFormats(rewritten)) if (!this.ajv.formats[format]) this.ajv.addFormat(format, true);
    const schemas: Json = {};
    for (const [name, schema] of Object.entries((rewritten.components?.schemas ?? {}) as Json)) {
      const copy = { ...(schema as Json) };
      // the generator stamps each component with its own `$id: "#/components/schemas/X"` and `$schema`;
      // they would re-root the component, so they are dropped (the rewritten refs name the location).
      delete copy.$id;
      delete copy.$schema;
      schemas[name] = copy;
    }
    this.ajv.addSchema({ $id: COMPONENTS_ID, components: { schemas } });
  }

  /** The documented route of a Fastify route url, if the document has it. */
  operation(method: string, fastifyUrl: string): { path: string; responses: Json } | undefined {
    const path = fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const item = this.paths[path] ?? this.paths[path.replace(/\/$/, '')];
    const operation = item?.[method.toLowerCase()];
    return operation?.responses ? { path, responses: operation.responses } : undefined;
  }

  /**
   * Validate one response: its media type must be one the document declares for the status, and a JSON
   * body must match the declared schema. Returns null when it conforms (an undocumented route's 2xx is not
   * checked), else the problem.
   */
  check(input: {
    method: string;
    routeUrl: string | undefined;
    /** false for a route that declares no response schema (a test's probe route): only its errors are checked. */
    documented?: boolean;
    url: string;
    status: number;
    contentType: string;
    body: string;
  }): ConformanceMismatch | null {
    const { method, routeUrl, url, status, contentType, body } = input;
    // 204 and 304 answers carry no body on the wire whatever the handler passed to send()
    if (method === 'HEAD' || status === 204 || status === 304 || status < 200) return null;
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    const isJson = /\bjson\b/.test(mediaType);
    const operation = routeUrl && input.documented !== false ? this.operation(method, routeUrl) : undefined;
    const mismatch = (documented: string, problem: string): ConformanceMismatch => ({
      method,
      route: operation?.path ?? routeUrl ?? url,
      url,
      status,
      documented,
      problem,
      body: body.length > MAX_BODY_IN_REPORT ? `${body.slice(0, MAX_BODY_IN_REPORT)}...` : body,
    });

    let key: string;
    let validate: ValidateFunction | null;
    if (!operation) {
      // Undocumented routes (the not-found handler, /openapi.json, /docs): only their errors are checked,
      // and they must carry the ServiceError body like every other non-2xx answer
      // (docs/decisions.md#error-body-everywhere).
      if (status < 400) return null;
      if (!isJson) return mismatch('ServiceError', `an error answer sent as ${mediaType || 'no content type'}, not the JSON ServiceError body`);
      key = 'ServiceError';
      validate = this.compile(key, { $ref: `${COMPONENTS_ID}#/components/schemas/ServiceError` });
    } else {
      key = operation.responses[String(status)] ? String(status) : operation.responses.default ? 'default' : '';
      if (!key) return mismatch('(none)', `status ${status} is not documented and the operation has no default response`);
      const content = operation.responses[key]?.content as Json | undefined;
      if (!isJson) {
        // not JSON: only the media type can be checked (a file download, an HTML page)
        if (!mediaType || Object.keys(content ?? {}).some((type) => mediaTypeMatches(type, mediaType))) return null;
        return mismatch(key, `a ${mediaType} body was sent but the document declares ${Object.keys(content ?? {}).join(', ') || 'no content'} for this status`);
      }
      if (!content) return mismatch(key, 'a JSON body was sent but the document declares no content for this status');
      const media = content['application/json'] ?? Object.entries(content).find(([type]) => /json/.test(type))?.[1];
      if (!media) return mismatch(key, `a JSON body was sent but the document declares only ${Object.keys(content).join(', ')}`);
      validate = this.compile(`${method} ${operation.path} ${key}`, media.schema ?? {});
    }
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (error) {
      return mismatch(key, `the body is not valid JSON: ${(error as Error).message}`);
    }
    if (!validate) return null;
    if (validate(value)) return null;
    return mismatch(key, formatErrors(validate.errors ?? []));
  }

  private compile(cacheKey: string, schema: Json): ValidateFunction | null {
    if (!this.compiled.has(cacheKey)) this.compiled.set(cacheKey, this.ajv.compile(schema));
    return this.compiled.get(cacheKey)!;
  }
}

/** Does a declared media type (possibly a range such as text/* or with parameters) cover the sent one? */
function mediaTypeMatches(declared: string, sent: string): boolean {
  const type = declared.split(';')[0]!.trim().toLowerCase();
  if (type === '*/*' || type === sent) return true;
  return type.endsWith('/*') && sent.startsWith(type.slice(0, -1));
}

function formatErrors(errors: ErrorObject[]): string {
  // anyOf failures list every branch; keep the report readable
  return errors
    .slice(0, 8)
    .map((error) => `${error.instancePath || '(root)'} ${error.message ?? error.keyword}${error.params ? ` ${JSON.stringify(error.params)}` : ''}`)
    .join('; ');
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, item] of Object.entries(value as Json)) {
    out[key] = key === '$ref' && typeof item === 'string' && item.startsWith('#/') ? `${COMPONENTS_ID}${item}` : rewriteRefs(item);
  }
  return out;
}

function collectFormats(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) collectFormats(item, found);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value as Json)) {
      if (key === 'format' && typeof item === 'string') found.add(item);
      else collectFormats(item, found);
    }
  }
  return found;
}

// One checker per distinct document (apps built with the same fixtures publish the same one, apart from
// the servers entry), so the components compile once per test process, not once per app.
const checkers = new Map<string, ConformanceChecker>();

export function checkerFor(document: Json): ConformanceChecker {
  const { servers: _servers, ...rest } = document;
  const hash = createHash('sha256').update(JSON.stringify(rest)).digest('hex');
  let checker = checkers.get(hash);
  if (!checker) {
    checker = new ConformanceChecker(document);
    checkers.set(hash, checker);
  }
  return checker;
}

/** What the hook records for one app. */
export interface ConformanceRecorder {
  mismatches: ConformanceMismatch[];
  /** Responses checked (JSON responses on documented routes, and errors). */
  checked: number;
  enabled: boolean;
}

/**
 * Install the onSend hook on a root instance that has no routes yet. The document is read lazily from
 * `app.swagger()` at the first response (the app is ready by then).
 */
export function installConformanceHook(app: FastifyInstance): ConformanceRecorder {
  const recorder: ConformanceRecorder = { mismatches: [], checked: 0, enabled: true };
  let checker: ConformanceChecker | undefined;
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (!recorder.enabled) return payload;
    const contentType = String(reply.getHeader('content-type') ?? '');
    const isJson = /\bjson\b/i.test(contentType);
    // a JSON body is read whole to validate it; of anything else (files, pages, streams) only the type counts
    const body = isJson ? (typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined) : '';
    if (body === undefined) return payload;
    try {
      checker ??= checkerFor(app.swagger() as unknown as Json);
      recorder.checked += 1;
      const mismatch = checker.check({
        method: request.method,
        routeUrl: request.routeOptions?.url,
        documented: Boolean((request.routeOptions?.schema as { response?: unknown } | undefined)?.response),
        url: request.url,
        status: reply.statusCode,
        contentType,
        body,
      });
      if (mismatch) recorder.mismatches.push(mismatch);
    } catch (error) {
      recorder.mismatches.push({
        method: request.method,
        route: request.routeOptions?.url ?? request.url,
        url: request.url,
        status: reply.statusCode,
        documented: '(checker)',
        problem: `the conformance check itself failed: ${(error as Error).stack ?? String(error)}`,
        body: body.slice(0, MAX_BODY_IN_REPORT),
      });
    }
    return payload;
  });
  return recorder;
}

/** A readable report of mismatches, one block each. */
export function describeMismatches(mismatches: readonly ConformanceMismatch[]): string {
  const lines = mismatches.slice(0, 20).map(
    (m) => `- ${m.method} ${m.route} -> ${m.status} (documented as ${m.documented}; url ${m.url}):\n    ${m.problem}\n    body: ${m.body}`,
  );
  if (mismatches.length > 20) lines.push(`... and ${mismatches.length - 20} more`);
  return `${mismatches.length} response(s) do not match /openapi.json:\n${lines.join('\n')}`;
}

// Fastify publishes every new instance on the `fastify.initialization` channel before any plugin or route
// is registered: the only moment a root hook still reaches every route of an app built by src/app.ts.
// The helper claims the instance created while it calls buildApp (that call is synchronous up to
// `Fastify(...)`), so apps created elsewhere in a test process are left alone.
let claim: ((app: FastifyInstance) => void) | undefined;
channel('fastify.initialization').subscribe((message) => {
  const app = (message as { fastify: FastifyInstance }).fastify;
  if (claim) {
    const take = claim;
    claim = undefined;
    take(app);
  }
});

/**
 * Run `build` (which must create its Fastify instance synchronously, as buildApp does) and install the
 * conformance hook on the instance it creates.
 */
export function withConformance<T>(build: () => Promise<T>): { result: Promise<T>; recorder: () => ConformanceRecorder | undefined } {
  let recorder: ConformanceRecorder | undefined;
  claim = (app) => {
    recorder = installConformanceHook(app);
  };
  let result: Promise<T>;
  try {
    result = build();
  } finally {
    claim = undefined;
  }
  return { result, recorder: () => recorder };
}
