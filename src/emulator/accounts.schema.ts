import { z } from 'zod';
import { instant } from '../http/formats.js';

// POST /_emulator/accounts/{accountId}/provider-ready (docs/control-plane.md#accounts)
export const providerReadyBody = z
  .strictObject({ ready: z.boolean({ error: 'ready must be true or false' }) })
  .meta({ id: 'ProviderReady' });
export const providerReadyResponse = z
  .object({
    accountId: z.string(),
    providerReady: z.boolean().describe('false: POST /v1/accounts/{accountId}/deposit-instructions answers 409 (interface 3.1)'),
    updatedAt: instant(),
  })
  .meta({ id: 'ProviderReadiness' });
