import type { AppContext } from '../../context.js';
import type { StateSlot } from '../../runtime/sandbox-runtime.js';
import type { ChaosEffect } from './webhooks.schema.js';

// What may act on a scheduled attempt between the dispatcher and the wire: webhook chaos (docs/faults.md#webhook-chaos).
// The faults module registers it on the sandbox's runtime (faults.domain.ts, `wire`), so the sender and the
// dispatcher call it without importing src/faults (docs/architecture.md#runtime). Without one, attempts go as planned.

/** The delivery an attempt belongs to, as the draws and holds need it. */
export interface ChaosTarget {
  deliveryId: string;
  eventId: string;
  resourceId: string;
  eventSeq: number;
  /** The scheduled attempt's number (1 for the first, 2 for the first retry, ...). */
  attemptNumber: number;
}

/** What chaos does to one attempt; `effects` is what the delivery log shows, filled in as they happen. */
export interface AttemptChaos {
  target: ChaosTarget | null;
  effects: ChaosEffect[];
  /** null: no delay fired (0 is a delay that fired with a drawn 0 ms, still logged). */
  delayMs: number | null;
  reorderHoldMs: number | null;
  burst: { size: number; windowMs: number } | null;
  /** Added to the real time sent as X-Service-Timestamp (negative: in the past). */
  timestampSkewMs: number;
  wrongSecret: boolean;
}

/** No chaos: what replays, duplicates and every attempt of a sandbox without settings get. */
export function noChaos(): AttemptChaos {
  return { target: null, effects: [], delayMs: null, reorderHoldMs: null, burst: null, timestampSkewMs: 0, wrongSecret: false };
}

export interface DeliveryInterceptor {
  /** True when it may act on an attempt now (the sender reads the delivery for it only then). */
  active(ctx: AppContext): boolean;
  /** What it does to a scheduled attempt, decided before the attempt is held or signed. */
  plan(ctx: AppContext, target: ChaosTarget): AttemptChaos;
  /** Wait out the plan's holds: false when the attempt is to be dropped unsent (stop or reset), true to send it now. */
  hold(ctx: AppContext, plan: AttemptChaos, signal?: AbortSignal): Promise<boolean>;
  /** An attempt has been sent. */
  sent(ctx: AppContext, target: ChaosTarget | null): void;
  /** After a scheduled attempt succeeded: is the same body sent again? */
  duplicate(ctx: AppContext, plan: AttemptChaos): boolean;
  /** Deliveries held out of order: they neither hold back later events of their transaction nor count as busy. */
  heldOutOfOrder(ctx: AppContext): string[];
}

/** The sandbox's delivery interceptor, registered once when its context is created. */
export const deliveryInterceptorSlot: StateSlot<{ interceptor: DeliveryInterceptor | null }> = {
  name: 'webhooks.deliveryInterceptor',
  create: () => ({ interceptor: null }),
  reset: 'keep', // wiring, not state: what it holds is reset by its owner's slot (faults.webhookChaos)
  carriedBySnapshots: false,
  newSession: 'fresh',
};

export function registerDeliveryInterceptor(ctx: AppContext, interceptor: DeliveryInterceptor): void {
  ctx.runtime.get(deliveryInterceptorSlot).interceptor = interceptor;
}

const none: DeliveryInterceptor = {
  active: () => false,
  plan: () => noChaos(),
  hold: async () => true,
  sent: () => undefined,
  duplicate: () => false,
  heldOutOfOrder: () => [],
};

export function deliveryInterceptorOf(ctx: AppContext): DeliveryInterceptor {
  return ctx.runtime.get(deliveryInterceptorSlot).interceptor ?? none;
}
