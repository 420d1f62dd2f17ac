import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../core/errors.js';
import type { StateSlot } from '../../runtime/sandbox-runtime.js';
import type { WebhookEndpoints } from './webhooks.schema.js';
import { notifyOutbox } from './outbox.js';

// Where each programme's webhooks go (docs/webhooks.md#delivery-log-and-replay): its URL, API key and secret, set by
// the control plane, `--webhook-url`, or a session's creator (docs/sessions.md#webhooks).

export interface ProgrammeWebhookRow {
  id: string;
  webhook_api_key: string;
  webhook_secret: string;
  webhook_url: string | null;
}

/** What an attempt of the programme is signed with and sent to; undefined for an unknown programme. */
export function programmeWebhookOf(ctx: AppContext, programmeId: string): ProgrammeWebhookRow | undefined {
  return prepared<ProgrammeWebhookRow>(ctx.db, 'SELECT id, webhook_api_key, webhook_secret, webhook_url FROM programmes WHERE id = ?').get(programmeId);
}

export function listEndpoints(ctx: AppContext, programmeId?: string): WebhookEndpoints {
  const rows = programmeId
    ? prepared<ProgrammeWebhookRow>(ctx.db, 'SELECT id, webhook_api_key, webhook_secret, webhook_url FROM programmes WHERE id = ?').all(programmeId)
    : prepared<ProgrammeWebhookRow>(ctx.db, 'SELECT id, webhook_api_key, webhook_secret, webhook_url FROM programmes ORDER BY id').all();
  if (programmeId && rows.length === 0) throw errors.notFound(`Programme ${programmeId} not found`);
  return { endpoints: rows.map((row) => ({ programId: row.id, url: row.webhook_url, apiKey: row.webhook_api_key })) };
}

/**
 * Set (or clear, with null) the webhook URL of one programme, or of every programme when none is named.
 * Deliveries still owed (PENDING, RETRYING) go to the new URL at their next attempt; SKIPPED ones stay
 * skipped until replayed.
 */
export function setWebhookEndpoint(ctx: AppContext, input: { url?: string | null; programId?: string }): WebhookEndpoints {
  const url = input.url ?? null;
  ctx.db.transaction(() => {
    if (input.programId) {
      const changed = prepared(ctx.db, 'UPDATE programmes SET webhook_url = ? WHERE id = ?').run(url, input.programId).changes;
      if (changed === 0) throw errors.notFound(`Programme ${input.programId} not found`);
    } else {
      prepared(ctx.db, 'UPDATE programmes SET webhook_url = ?').run(url);
    }
  })();
  notifyOutbox(ctx);
  return listEndpoints(ctx, input.programId);
}

/**
 * A session's webhook URL (docs/sessions.md#webhooks): every programme's endpoint at creation and after every reset,
 * whatever the fixtures or the starting snapshot say (null: none). `undefined` outside sessions (the root sandbox).
 */
export const sessionWebhookUrlSlot: StateSlot<string | null | undefined> = {
  name: 'webhooks.sessionUrl',
  create: () => undefined,
  reset: 'keep', // and put back on every programme by the reset (src/emulator/reset.service.ts)
  carriedBySnapshots: false,
  newSession: 'given',
};

export function sessionWebhookUrl(ctx: AppContext): string | null | undefined {
  return ctx.runtime.get(sessionWebhookUrlSlot);
}

/** A session's creator fixes where it sends, now and after every reset (docs/sessions.md#webhooks). */
export function pinSessionWebhookUrl(ctx: AppContext, url: string | null): void {
  ctx.runtime.set(sessionWebhookUrlSlot, url);
  setWebhookEndpoint(ctx, { url });
}
