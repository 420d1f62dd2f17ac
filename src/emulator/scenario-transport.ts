import type { FastifyInstance } from 'fastify';
import { internalCallHeaders } from '../faults/internal-call.js';
import { injectTransport as engineTransport, type ScenarioTransport } from '../scenarios/scenario.transport.js';
import { SCENARIO_RECEIVER_URL } from './scenario-receiver.js';

// The engine's transport inside the server (docs/sessions.md#scenarios): each call goes through the app in process
// (app.inject), under the sandbox's path prefix, so it meets the routing, authentication, validation, journal and
// fault rules a client's request meets; nothing opens a socket.

export interface InjectTransportOptions {
  /** '' for the root sandbox, '/_sessions/ses_...' for a session: the HMAC covers the path as sent. */
  prefix: string;
  /** The server's --admin-token, sent with every call when set (the control plane requires it). */
  adminToken?: string | undefined;
  /**
   * Let the calls through the sandbox's fault rules (docs/faults.md#what-rules-never-touch): the guided demo's routes
   * only. A played scenario's calls are a client's, so the rules its own `fault` steps add fire on them.
   */
  bypassFaultRules?: boolean;
}

export function injectTransport(app: FastifyInstance, options: InjectTransportOptions): ScenarioTransport {
  return engineTransport(app, options.prefix, {
    ...(options.adminToken ? { 'x-admin-token': options.adminToken } : {}),
    ...(options.bypassFaultRules ? internalCallHeaders() : {}),
  }, async () => SCENARIO_RECEIVER_URL);
}
