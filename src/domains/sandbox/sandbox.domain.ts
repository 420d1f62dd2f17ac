import type { DomainDescriptor } from '../domain.js';
import { sandboxRoutes } from './sandbox.routes.js';

export const sandboxDomain: DomainDescriptor = {
  name: 'sandbox',
  routes: [sandboxRoutes],
  // its part of the OpenAPI document (docs/openapi.md#what-each-area-adds): the header a deposit's answer carries
  // (docs/money-in.md#simulated-deposits)
  openapi: {
    responseHeaders: {
      'POST /v1/sandbox/accounts/{accountId}/deposits': {
        '202': {
          Location: {
            description: 'The transaction the deposit created, /v1/transactions/{id} (inside a session, under its /_sessions/{id} prefix); the body is the interface\'s message',
            schema: { type: 'string', example: '/v1/transactions/txn_k7m2q9r4t8v1w3x5' },
          },
        },
      },
    },
  },
};
