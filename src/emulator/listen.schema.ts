import { z } from 'zod';
import { instant } from '../http/formats.js';
import { isHttpUrl } from '../lib/http-url.js';

// docs/webhooks.md#listen: the relay that carries a sandbox's webhook attempts to `service-sandbox listen`.

const httpUrl = z
  .string()
  .max(2048, 'forwardTo accepts an http:// or https:// URL of at most 2048 characters')
  .refine(isHttpUrl, { message: 'forwardTo accepts an http:// or https:// URL, such as http://127.0.0.1:3000/webhooks' });

export const listenStreamQuery = z.strictObject({
  forwardTo: httpUrl.meta({ examples: ['http://127.0.0.1:3000/webhooks'] }).describe('Where the listener posts the deliveries: every programme\'s webhook endpoint becomes this URL, and deliveries are signed for its path'),
});

export const listenerParams = z.strictObject({
  // a listener exists only while `service-sandbox listen` holds the stream open: the example shows the form
  listenerId: z.string().min(1).max(64).meta({ examples: ['lst_0123456789abcdef'] }).describe('The listener id of the stream\'s `ready` event (lst_...)'),
});

export const listenResultBody = z
  .strictObject({
    attemptId: z.string().min(1).max(64).describe('The attempt of the stream\'s `attempt` event'),
    status: z.number().int().min(100).max(599).nullable().describe('The HTTP status the app answered; null when it did not answer'),
    responseBody: z.string().max(65_536).nullable().optional().describe('The first bytes of the app\'s answer (the delivery log keeps 2 KiB)'),
    error: z.string().max(2000).nullable().optional().describe('Why there was no answer (connection refused, timeout), when status is null'),
    latencyMs: z.number().min(0).max(3_600_000).describe('Real milliseconds from sending to the answer'),
  })
  .meta({ id: 'ListenAttemptResult' });
export type ListenResultBody = z.infer<typeof listenResultBody>;

export const listenStatusSchema = z
  .object({
    forwardTo: z.string().nullable().describe('The URL deliveries go to through the relay; null: no relay, deliveries go out directly'),
    connected: z.boolean().describe('A listener holds the stream open now; without one, deliveries to forwardTo fail as to an unreachable URL and are retried'),
    listenerId: z.string().nullable(),
    connectedAt: instant().nullable().describe('Real time the listener connected'),
    waiting: z.number().int().min(0).describe('Attempts handed to the listener that wait for the app\'s answer'),
  })
  .meta({ id: 'ListenStatus' });
export type ListenStatus = z.infer<typeof listenStatusSchema>;
