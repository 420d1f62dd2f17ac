import type { DomainDescriptor } from '../domains/domain.js';
import { faultRulesRoutes } from './fault-rules.routes.js';
import { webhookChaosRoutes } from './webhook-chaos.routes.js';
import { receiverCheckRoutes } from './receiver-check.routes.js';
import { faultRulesSlot } from './fault-rules.service.js';
import { registerWebhookChaos, webhookChaosSlot } from './webhook-chaos.service.js';

// Faults on demand (docs/faults.md): fault rules on API requests, webhook chaos and the receiver check. Each
// part adds its route module here, and its in-memory state (docs/architecture.md#runtime).
export const faultsDomain: DomainDescriptor = {
  name: 'faults',
  routes: [faultRulesRoutes, webhookChaosRoutes, receiverCheckRoutes],
  state: [faultRulesSlot, webhookChaosSlot],
  // webhook chaos reaches the sender and the dispatcher as their delivery interceptor, not by an import
  wire: registerWebhookChaos,
  // its part of the OpenAPI document (docs/openapi.md#what-each-area-adds)
  openapi: {
    parameters: {
      'GET /_emulator/faults/{id} id': { description: 'The id of a fault rule', example: 'flt_1' },
      'DELETE /_emulator/faults/{id} id': { description: 'The id of a fault rule', example: 'flt_1' },
    },
    // how far webhook chaos moves a timestamp: back or forward
    signedIntegers: ['skewSeconds'],
  },
};
