import { z } from 'zod';
import { instant } from '../http/formats.js';

export const healthResponse = z.object({ status: z.literal('ok'), now: instant(), version: z.string() });
