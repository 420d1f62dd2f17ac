import { z } from 'zod';

export const resetResponse = z.object({ status: z.literal('reset'), durationMs: z.number() });
