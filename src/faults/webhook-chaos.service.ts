import { DEFAULT_SEED } from '../config.js';
import type { AppContext } from '../context.js';
import { seededRandom } from '../lib/seeded-random.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import { CHAOS_KINDS, type ChaosKind } from '../domains/webhooks/webhooks.schema.js';
import { noChaos, registerDeliveryInterceptor, type AttemptChaos, type ChaosTarget, type DeliveryInterceptor } from '../domains/webhooks/webhooks.interceptor.js';
import { CHAOS_DEFAULTS, type WebhookChaos, type WebhookChaosInput } from './webhook-chaos.schema.js';

// Webhook chaos (docs/faults.md#webhook-chaos): per sandbox (a runtime slot, so the root and every session have
// their own: docs/architecture.md#runtime), in memory only: not in the database, not in snapshots; reset and the end
// of a session clear it. It reaches the webhook sender as the sandbox's delivery interceptor, registered by the
// faults descriptor (`registerWebhookChaos`): the sender asks `planAttemptChaos` before each scheduled attempt, waits
// in `holdAttempt`, signs with the plan's skew and secret, tells `attemptSent` once it has been sent, and asks
// `duplicateFires` after a success. Every draw is its own generator seeded with (seed, kind, eventId, attempt number), so the
// same requests give the same chaos whatever order the dispatcher happens to send them in
// (docs/decisions.md#webhook-chaos-draws).

interface Mode {
  probability: number | null;
  times: number | null;
}

interface Settings {
  duplicate?: Mode;
  reorder?: Mode & { holdMs: number };
  delay?: Mode & { ms: number | null; minMs: number; maxMs: number };
  staleTimestamp?: Mode & { skewSeconds: number };
  futureTimestamp?: Mode & { skewSeconds: number };
  badSignature?: Mode;
  burst?: Mode & { size: number; windowMs: number };
}

interface ChaosState {
  seed: string;
  settings: Settings;
  fired: Record<ChaosKind, number>;
}

type HoldType = 'delay' | 'reorder' | 'burst';

interface Hold {
  type: HoldType;
  target: ChaosTarget;
  timer: NodeJS.Timeout | null;
  /** Ends the hold: a detail for the log (send now), or null (drop the attempt unsent: stop or reset). */
  release(detail: string | null): void;
}

interface BurstGroup {
  members: Hold[];
  size: number;
  timer: NodeJS.Timeout | null;
}

interface Holds {
  all: Set<Hold>;
  burst: BurstGroup | null;
}

interface ChaosRuntime {
  /** null: no settings (chaos off). */
  state: ChaosState | null;
  holds: Holds;
  /** Holds by the dispatcher's stop signal: one listener per signal, however many attempts are held. */
  holdsUnder: WeakMap<AbortSignal, Set<Hold>>;
}

/**
 * Reset clears the settings and drops the attempts held at that moment unsent (their deliveries are gone with the
 * reset); snapshots leave it as it is (docs/faults.md#reset-sessions-and-snapshots).
 */
export const webhookChaosSlot: StateSlot<ChaosRuntime> = {
  name: 'faults.webhookChaos',
  create: () => ({ state: null, holds: { all: new Set(), burst: null }, holdsUnder: new WeakMap() }),
  reset: (chaos) => {
    chaos.state = null;
    releaseAll(chaos.holds, null);
  },
  carriedBySnapshots: false,
  newSession: 'fresh',
};

function chaosOf(ctx: AppContext): ChaosRuntime {
  return ctx.runtime.get(webhookChaosSlot);
}

/** faults.domain.ts `wire`: webhook chaos is the sandbox's delivery interceptor (src/domains/webhooks/webhooks.interceptor.ts). */
export function registerWebhookChaos(ctx: AppContext): void {
  registerDeliveryInterceptor(ctx, webhookChaosInterceptor);
}

const webhookChaosInterceptor: DeliveryInterceptor = {
  active: chaosActive,
  plan: planAttemptChaos,
  hold: holdAttempt,
  sent: attemptSent,
  duplicate: duplicateFires,
  heldOutOfOrder,
};

function defaultChaosSeed(ctx: AppContext): string {
  return `${ctx.config.seed ?? DEFAULT_SEED}/webhook-chaos`;
}

/** True when the sandbox has settings or held attempts (the sender reads the delivery for chaos only then). */
function chaosActive(ctx: AppContext): boolean {
  const chaos = chaosOf(ctx);
  return chaos.state !== null || chaos.holds.all.size > 0;
}

// ---------------------------------------------------------------------------------------------------------
// The control plane (src/faults/webhook-chaos.routes.ts)

export function putWebhookChaos(ctx: AppContext, input: WebhookChaosInput): WebhookChaos {
  chaosOf(ctx).state = { seed: input.seed ?? defaultChaosSeed(ctx), settings: settingsOf(input), fired: zeroCounts() };
  return getWebhookChaos(ctx);
}

export function getWebhookChaos(ctx: AppContext): WebhookChaos {
  const state = chaosOf(ctx).state;
  const s = state?.settings ?? {};
  const view = <T extends Mode>(kind: ChaosKind, settings: T | undefined) => (settings ? { ...settings, ...counts(state!, kind, settings) } : null);
  return {
    seed: state?.seed ?? defaultChaosSeed(ctx),
    heldNow: chaosOf(ctx).holds.all.size,
    duplicate: view('duplicate', s.duplicate),
    reorder: view('reorder', s.reorder),
    delay: view('delay', s.delay),
    staleTimestamp: view('staleTimestamp', s.staleTimestamp),
    futureTimestamp: view('futureTimestamp', s.futureTimestamp),
    badSignature: view('badSignature', s.badSignature),
    burst: view('burst', s.burst),
  };
}

/** DELETE /_emulator/webhooks/chaos: no more chaos; attempts held at this moment are sent now. */
export function clearWebhookChaos(ctx: AppContext): void {
  const chaos = chaosOf(ctx);
  chaos.state = null;
  releaseAll(chaos.holds, 'released early: the chaos settings were cleared');
}

function settingsOf(input: WebhookChaosInput): Settings {
  const mode = (m: { probability?: number; times?: number }): Mode => ({ probability: m.probability ?? null, times: m.times ?? null });
  const settings: Settings = {};
  if (input.duplicate) settings.duplicate = mode(input.duplicate);
  if (input.reorder) settings.reorder = { ...mode(input.reorder), holdMs: input.reorder.holdMs ?? CHAOS_DEFAULTS.reorderHoldMs };
  if (input.delay) {
    const { ms, minMs, maxMs } = input.delay;
    settings.delay = { ...mode(input.delay), ms: ms ?? null, minMs: ms ?? minMs!, maxMs: ms ?? maxMs! };
  }
  if (input.staleTimestamp) settings.staleTimestamp = { ...mode(input.staleTimestamp), skewSeconds: input.staleTimestamp.skewSeconds ?? CHAOS_DEFAULTS.skewSeconds };
  if (input.futureTimestamp) settings.futureTimestamp = { ...mode(input.futureTimestamp), skewSeconds: input.futureTimestamp.skewSeconds ?? CHAOS_DEFAULTS.skewSeconds };
  if (input.badSignature) settings.badSignature = mode(input.badSignature);
  if (input.burst) {
    settings.burst = { ...mode(input.burst), size: input.burst.size ?? CHAOS_DEFAULTS.burstSize, windowMs: input.burst.windowMs ?? CHAOS_DEFAULTS.burstWindowMs };
  }
  return settings;
}

function zeroCounts(): Record<ChaosKind, number> {
  return Object.fromEntries(CHAOS_KINDS.map((kind) => [kind, 0])) as Record<ChaosKind, number>;
}

function counts(state: ChaosState, kind: ChaosKind, mode: Mode): { fired: number; remaining: number | null } {
  const fired = state.fired[kind];
  return { fired, remaining: mode.times === null ? null : Math.max(0, mode.times - fired) };
}

// ---------------------------------------------------------------------------------------------------------
// Draws

/** One generator per (seed, kind, eventId, attempt): the draw does not depend on what else is being sent. */
function drawFor(state: ChaosState, kind: string, target: ChaosTarget) {
  return seededRandom(`${state.seed}|${kind}|${target.eventId}|${target.attemptNumber}`);
}

/**
 * Does `kind` fire on this attempt? Off: no. Spent (`times` reached): no. With a probability: the seeded draw
 * decides. Otherwise (times only, or neither): yes. A firing is counted at once.
 */
function fires(state: ChaosState, kind: ChaosKind, target: ChaosTarget): boolean {
  const mode = state.settings[kind];
  if (!mode) return false;
  if (mode.times !== null && state.fired[kind] >= mode.times) return false;
  if (mode.probability !== null && !drawFor(state, kind, target).chance(mode.probability)) return false;
  state.fired[kind] += 1;
  return true;
}

/**
 * Decide what chaos does to a scheduled attempt, before it is held or signed. The timestamp and signature
 * effects are logged here (they are applied when the attempt is signed); holds log theirs when they end.
 */
function planAttemptChaos(ctx: AppContext, target: ChaosTarget): AttemptChaos {
  const plan = noChaos();
  plan.target = target; // also without settings: a send may release a hold made before a PUT or DELETE
  const state = chaosOf(ctx).state;
  if (!state) return plan;
  const { delay, reorder, burst, staleTimestamp, futureTimestamp } = state.settings;
  if (delay && fires(state, 'delay', target)) plan.delayMs = drawFor(state, 'delay-ms', target).between(delay.minMs, delay.maxMs);
  // one held event per transaction at a time: a later event is what releases it (docs/faults.md#reorder)
  if (reorder && !earlierEventHeld(ctx, target) && fires(state, 'reorder', target)) plan.reorderHoldMs = reorder.holdMs;
  if (burst && fires(state, 'burst', target)) plan.burst = { size: burst.size, windowMs: burst.windowMs };
  if (staleTimestamp && fires(state, 'staleTimestamp', target)) {
    plan.timestampSkewMs = -staleTimestamp.skewSeconds * 1000;
    plan.effects.push({ type: 'staleTimestamp', detail: `X-Service-Timestamp ${staleTimestamp.skewSeconds} s in the past, signed over it` });
  } else if (futureTimestamp && fires(state, 'futureTimestamp', target)) {
    plan.timestampSkewMs = futureTimestamp.skewSeconds * 1000;
    plan.effects.push({ type: 'futureTimestamp', detail: `X-Service-Timestamp ${futureTimestamp.skewSeconds} s in the future, signed over it` });
  }
  if (fires(state, 'badSignature', target)) {
    plan.wrongSecret = true;
    plan.effects.push({ type: 'badSignature', detail: "X-Service-Signature made with a secret that is not the programme's webhook secret" });
  }
  return plan;
}

/** After a scheduled attempt succeeded: is the same body sent again? */
function duplicateFires(ctx: AppContext, plan: AttemptChaos): boolean {
  const state = chaosOf(ctx).state;
  return !!state && plan.target !== null && fires(state, 'duplicate', plan.target);
}

// ---------------------------------------------------------------------------------------------------------
// Holds (real time): delay, then reorder, then burst

function holdsOf(ctx: AppContext): Holds {
  return chaosOf(ctx).holds;
}

function earlierEventHeld(ctx: AppContext, target: ChaosTarget): boolean {
  for (const hold of holdsOf(ctx).all) {
    if (hold.type === 'reorder' && hold.target.resourceId === target.resourceId && hold.target.eventSeq < target.eventSeq) return true;
  }
  return false;
}

/**
 * Deliveries held by reorder or burst: they do not hold back the later events of their transaction (the
 * dispatcher's ordering is bypassed on purpose) and do not count against its concurrency.
 */
function heldOutOfOrder(ctx: AppContext): string[] {
  const ids: string[] = [];
  for (const hold of holdsOf(ctx).all) if (hold.type !== 'delay') ids.push(hold.target.deliveryId);
  return ids;
}

/**
 * Wait out the plan's holds. Resolves false when the attempt is to be dropped unsent (the dispatcher stopped,
 * or the sandbox was reset), true when it is to be sent now.
 */
async function holdAttempt(ctx: AppContext, plan: AttemptChaos, signal?: AbortSignal): Promise<boolean> {
  const target = plan.target;
  if (!target) return true;
  const steps: Array<[HoldType, (hold: Hold) => void]> = [];
  const delayMs = plan.delayMs;
  if (delayMs !== null) steps.push(['delay', (hold) => armTimer(hold, delayMs, `held ${delayMs} ms before it was sent`)]);
  if (plan.reorderHoldMs !== null) {
    const holdMs = plan.reorderHoldMs;
    steps.push(['reorder', (hold) => armTimer(hold, holdMs, `held ${holdMs} ms; no later event of transaction ${target.resourceId} was sent meanwhile`)]);
  }
  if (plan.burst) {
    const burst = plan.burst;
    steps.push(['burst', (hold) => joinBurst(ctx, hold, burst)]);
  }
  for (const [type, arm] of steps) {
    const detail = await holdFor(ctx, type, target, arm, signal);
    if (detail === null) return false;
    plan.effects.push({ type, detail });
  }
  return true;
}

function holdFor(ctx: AppContext, type: HoldType, target: ChaosTarget, arm: (hold: Hold) => void, signal?: AbortSignal): Promise<string | null> {
  if (signal?.aborted) return Promise.resolve(null);
  const { holds, holdsUnder } = chaosOf(ctx);
  return new Promise((resolve) => {
    const hold: Hold = {
      type,
      target,
      timer: null,
      release(detail) {
        if (!holds.all.delete(hold)) return; // released already
        if (hold.timer) clearTimeout(hold.timer);
        if (signal) holdsUnder.get(signal)?.delete(hold);
        leaveBurst(holds, hold);
        resolve(detail);
      },
    };
    holds.all.add(hold);
    if (signal) watchStop(holdsUnder, signal, hold);
    arm(hold);
  });
}

function watchStop(holdsUnder: WeakMap<AbortSignal, Set<Hold>>, signal: AbortSignal, hold: Hold): void {
  let set = holdsUnder.get(signal);
  if (!set) {
    const created = new Set<Hold>();
    holdsUnder.set(signal, (set = created));
    signal.addEventListener('abort', () => {
      for (const held of [...created]) held.release(null);
    }, { once: true });
  }
  set.add(hold);
}

function armTimer(hold: Hold, ms: number, detail: string): void {
  hold.timer = setTimeout(() => hold.release(detail), ms);
  hold.timer.unref();
}

function joinBurst(ctx: AppContext, hold: Hold, burst: { size: number; windowMs: number }): void {
  const holds = holdsOf(ctx);
  let group = holds.burst;
  if (!group) {
    const started: BurstGroup = { members: [], size: burst.size, timer: null };
    started.timer = setTimeout(() => releaseBurst(holds, started, `the ${burst.windowMs} ms window ended`), burst.windowMs);
    started.timer.unref();
    holds.burst = group = started;
  }
  group.members.push(hold);
  if (group.members.length >= group.size) releaseBurst(holds, group, `${group.size} were waiting`);
}

function releaseBurst(holds: Holds, group: BurstGroup, reason: string): void {
  if (holds.burst === group) holds.burst = null;
  if (group.timer) clearTimeout(group.timer);
  const members = group.members.splice(0);
  for (const member of members) member.release(`sent at once with ${members.length - 1} other held deliveries (burst: ${reason})`);
}

function leaveBurst(holds: Holds, hold: Hold): void {
  const group = holds.burst;
  if (!group || hold.type !== 'burst') return;
  const index = group.members.indexOf(hold);
  if (index >= 0) group.members.splice(index, 1);
}

function releaseAll(holds: Holds, detail: string | null): void {
  if (holds.burst?.timer) clearTimeout(holds.burst.timer);
  holds.burst = null;
  for (const hold of [...holds.all]) hold.release(detail);
}

/** An attempt has been sent: release the reorder holds of earlier events of its transaction. */
function attemptSent(ctx: AppContext, target: ChaosTarget | null): void {
  const holds = holdsOf(ctx);
  if (!target) return;
  for (const hold of [...holds.all]) {
    if (hold.type === 'reorder' && hold.target.resourceId === target.resourceId && hold.target.eventSeq < target.eventSeq) {
      hold.release(`held until ${target.eventId}, a later event of the same transaction, had been sent`);
    }
  }
}
