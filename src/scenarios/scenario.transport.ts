import type { FastifyInstance, InjectOptions } from 'fastify';
import { targetProblem } from '../lib/request-target.js';
import { connectionWasClosed } from '../lib/connection-closed.js';

// How the scenario engine reaches a sandbox (docs/decisions.md#scenario-engine): the same engine runs in the server
// (over app.inject) and in the CLI (over HTTP to --url, or to the server it started). Paths are relative to the
// sandbox; the transport adds the sandbox's prefix, and the engine signs `/v1` requests over prefix + path, the target
// as sent (docs/sessions.md#addresses-and-signing).

export interface TransportRequest {
  method: string;
  /** '/v1/...' or '/_emulator/...', with the query string; no prefix. */
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
}

export interface TransportAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

export interface ScenarioTransport {
  /** path is relative to the sandbox: '/v1/...' or '/_emulator/...'; the transport adds the session prefix. */
  call(request: TransportRequest): Promise<TransportAnswer>;
  /** The path prefix the sandbox answers under ('' for the root, '/_sessions/ses_...' for a session). */
  readonly prefix: string;
  /** A webhook receiver answering 2xx, for files with `webhooks: { receiver: true }`; absent: such files cannot run here. */
  webhookReceiverUrl?(): Promise<string>;
}

export class TransportError extends Error {}

/**
 * Refuses a path the URL parser would rewrite, before it goes under the prefix: `..` or `%2e%2e` segments (from the file
 * or from a value a reference filled in) would reach another sandbox's routes, the root's or another session's
 * (docs/scenarios.md#paths). Every call of both transports passes here, the engine's own paths included.
 */
function checkTarget(request: TransportRequest): void {
  const problem = targetProblem(request.path);
  if (problem !== null) throw new TransportError(`${request.method} ${request.path} was not sent: the path is not normalized: ${problem}; a scenario's calls stay in its own session`);
}

function flatHeaders(headers: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  return flat;
}

/**
 * In process, through the app itself. `extraHeaders`: what every call adds; the control plane passes
 * `internalCallHeaders()` (src/faults/internal-call.ts) so the sandbox's fault rules do not touch the engine's own
 * calls (docs/faults.md#what-rules-never-touch), and the admin token when one is set.
 */
export function injectTransport(app: FastifyInstance, prefix: string, extraHeaders: Record<string, string> = {}, webhookReceiverUrl?: () => Promise<string>): ScenarioTransport {
  return {
    prefix,
    ...(webhookReceiverUrl ? { webhookReceiverUrl } : {}),
    async call(request) {
      checkTarget(request);
      const response = await app.inject({
        method: request.method as InjectOptions['method'],
        url: prefix + request.path,
        headers: { ...request.headers, ...extraHeaders },
        ...(request.body === undefined ? {} : { payload: request.body }),
      });
      // an ambiguous failure without a status closes the connection after processing: no answer, as over HTTP
      if (connectionWasClosed(response.raw.req)) {
        throw new TransportError(`${request.method} ${prefix}${request.path} failed: the connection was closed without an answer`);
      }
      return { status: response.statusCode, headers: flatHeaders(response.headers), body: response.body };
    },
  };
}


/**
 * Over HTTP to a sandbox's base URL (a server's, or a session's baseUrl, whose path is the prefix). `adminToken` goes on
 * `/_emulator` calls (docs/decisions.md#control-plane-open). Each call is bounded by `timeoutMs`.
 */
export function httpTransport(baseUrl: string, options: { adminToken?: string | undefined; timeoutMs?: number; webhookReceiverUrl?: () => Promise<string> } = {}): ScenarioTransport {
  const url = new URL(baseUrl);
  const origin = url.origin;
  const prefix = url.pathname.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 60_000;
  return {
    prefix,
    ...(options.webhookReceiverUrl ? { webhookReceiverUrl: options.webhookReceiverUrl } : {}),
    async call(request) {
      checkTarget(request);
      const headers: Record<string, string> = { ...request.headers };
      if (options.adminToken && request.path.startsWith('/_emulator/')) headers.authorization = `Bearer ${options.adminToken}`;
      let response: Response;
      try {
        response = await fetch(origin + prefix + request.path, {
          method: request.method,
          headers,
          ...(request.body === undefined ? {} : { body: request.body }),
          signal: AbortSignal.timeout(timeoutMs),
          redirect: 'manual',
        });
      } catch (error) {
        const cause = (error as { cause?: { message?: string } }).cause?.message;
        throw new TransportError(`${request.method} ${origin}${prefix}${request.path} failed: ${(error as Error).message}${cause ? ` (${cause})` : ''}`);
      }
      const answerHeaders: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        answerHeaders[name.toLowerCase()] = value;
      });
      return { status: response.status, headers: answerHeaders, body: await response.text() };
    },
  };
}
