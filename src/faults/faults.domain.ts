import type { DomainDescriptor } from '../domains/domain.js';
import { faultRulesRoutes } from './fault-rules.routes.js';
import { webhookChaosRoutes } from './webhook-chaos.routes.js';
import { receiverCheckRoutes } from './receiver-check.routes.js';

// Faults on demand (docs/faults.md): fault rules on API requests, webhook chaos and the receiver check. Each
// part adds its route module here.
export const faultsDomain: DomainDescriptor = {
  name: 'faults',
  routes: [faultRulesRoutes, webhookChaosRoutes, receiverCheckRoutes],
};
