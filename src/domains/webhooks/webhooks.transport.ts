import type { AppContext } from '../../context.js';
import type { StateSlot } from '../../runtime/sandbox-runtime.js';
import type { AttemptResult, PreparedAttempt } from './webhooks.attempt.js';

// How an attempt reaches its URL when it is not a direct HTTP request from the emulator: the `listen` relay
// (docs/webhooks.md#listen) carries the attempts of its forward-to URL to a process the emulator cannot reach.
// The control plane registers it on the sandbox's runtime (emulator.domain.ts, `wire`), so the sender calls it without
// importing src/emulator (docs/architecture.md#layers). Attempts to any other URL go out directly.

/** An attempt as a transport carries it: a delivery's (or the receiver check's, without a delivery id). */
export type TransportedAttempt = Pick<PreparedAttempt, 'url' | 'headers' | 'body'> & { deliveryId: string | null };

export interface DeliveryTransport {
  /** True when attempts to `url` travel through this transport. */
  carries(ctx: AppContext, url: string): boolean;
  /** Send the prepared attempt (its headers and bytes as they are) and answer what came back, never throwing. */
  send(ctx: AppContext, attempt: TransportedAttempt, options: { timeoutMs: number; signal?: AbortSignal }): Promise<AttemptResult>;
}

/** The sandbox's delivery transport, registered once when its context is created. */
export const deliveryTransportSlot: StateSlot<{ transport: DeliveryTransport | null }> = {
  name: 'webhooks.deliveryTransport',
  create: () => ({ transport: null }),
  reset: 'keep', // wiring, not state: what it carries is reset by its owner's slot (emulator.listen)
  carriedBySnapshots: false,
  newSession: 'fresh',
};

export function registerDeliveryTransport(ctx: AppContext, transport: DeliveryTransport): void {
  ctx.runtime.get(deliveryTransportSlot).transport = transport;
}

/** The transport that carries attempts to `url`, or null when they go out directly. */
export function deliveryTransportFor(ctx: AppContext, url: string): DeliveryTransport | null {
  const { transport } = ctx.runtime.get(deliveryTransportSlot);
  return transport && transport.carries(ctx, url) ? transport : null;
}
