import type { FastifyInstance, InjectOptions } from 'fastify';
import { internalCallHeaders } from '../faults/internal-call.js';
import type { ScenarioTransport } from '../scenarios/scenario.run.js';

// The engine's transport inside the server (docs/sessions.md#scenarios): each call goes through the app in process
// (app.inject), under the sandbox's path prefix, so it meets the routing, authentication, validation, journal and
// fault rules a client's request meets; nothing opens a socket.

export interface InjectTransportOptions {
  /** '' for the root sandbox, '/_sessions/ses_...' for a session: the HMAC covers the path as sent. */
  prefix: string;
  /** The server's --admin-token, added to control-plane calls when set. */
  adminToken?: string | undefined;
  /**
   * Let the calls through the sandbox's fault rules (docs/faults.md#what-rules-never-touch): the guided demo's routes
   * only. A played scenario's calls are a client's, so the rules its own `fault` steps add fire on them.
   */
  bypassFaultRules?: boolean;
}

export function injectTransport(app: FastifyInstance, options: InjectTransportOptions): ScenarioTransport {
  return {
    prefix: options.prefix,
    async call(request) {
      const headers: Record<string, string> = { ...request.headers };
      if (options.adminToken && request.path.startsWith('/_emulator/')) headers['x-admin-token'] = options.adminToken;
      if (options.bypassFaultRules) Object.assign(headers, internalCallHeaders());
      const response = await app.inject({
        method: request.method as InjectOptions['method'],
        url: options.prefix + request.path,
        headers,
        ...(request.body === undefined ? {} : { payload: request.body }),
      });
      const answerHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined) answerHeaders[name] = Array.isArray(value) ? value.join(', ') : String(value);
      }
      return { status: response.statusCode, headers: answerHeaders, body: response.body };
    },
  };
}
