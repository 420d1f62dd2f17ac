import type { z } from 'zod';
import type { AppContext } from '../context.js';
import { listEndpoints } from '../domains/webhooks/webhooks.endpoints.js';
import { FixturesError, validateFixtures } from '../fixtures/fixtures.loader.js';
import { getSnapshot } from '../emulator/snapshots.service.js';
import { errors } from '../core/errors.js';
import type { createSessionBody, sessionSchema } from './sessions.schema.js';
import { SESSION_PATH, type Session, type SessionOptions, type SessionRegistry } from './sessions.registry.js';

// The control plane's side of sessions (docs/sessions.md): what a request asks for, checked, and what a session
// looks like to a client.

type CreateSessionInput = z.infer<typeof createSessionBody>;
type SessionView = z.infer<typeof sessionSchema>;

/** Check the body against the root sandbox (its snapshots) and the fixtures rules; nothing is built on a refusal. */
export function sessionOptionsOf(root: AppContext, input: CreateSessionInput): SessionOptions {
  const body = input ?? {};
  if (body.snapshot !== undefined && (body.fixtures !== undefined || body.clock !== undefined)) {
    throw errors.field('InvalidValue', 'snapshot', 'snapshot cannot be combined with fixtures or clock: a snapshot holds its own data and clock');
  }
  const options: SessionOptions = {};
  if (body.snapshot !== undefined) options.snapshot = getSnapshot(root, body.snapshot);
  if (body.fixtures !== undefined) {
    try {
      options.fixtures = validateFixtures(body.fixtures, 'fixtures');
    } catch (error) {
      if (error instanceof FixturesError) throw errors.field('InvalidValue', 'fixtures', error.message);
      throw error;
    }
  }
  if (body.clock !== undefined) options.clock = body.clock;
  if (body.webhookUrl !== undefined) options.webhookUrl = body.webhookUrl;
  if (body.seed !== undefined) options.seed = body.seed;
  if (body.label !== undefined) options.label = body.label;
  return options;
}

export function sessionOrThrow(registry: SessionRegistry, id: string): Session {
  const session = registry.get(id);
  if (!session) throw errors.notFound(`No session "${id}": it was ended, it expired, or it never existed`);
  return session;
}

/** `origin` is the scheme and host the client used (the request's Host), so baseUrl works through Docker's port mapping. */
export function sessionView(registry: SessionRegistry, session: Session, origin: string): SessionView {
  const { ctx } = session.sandbox;
  const programme = ctx.fixtures.programmes[0]!;
  const single = programme.apiKeys.find((key) => key.integrationType === 'SINGLE_USER');
  const multi = programme.apiKeys.find((key) => key.integrationType === 'MULTI_USER');
  const webhookUrl = listEndpoints(ctx, programme.id).endpoints[0]?.url ?? null;
  return {
    id: session.id,
    baseUrl: `${origin}${SESSION_PATH}${session.id}`,
    createdAt: new Date(session.createdAtMs).toISOString(),
    lastUsedAt: new Date(session.lastUsedAtMs).toISOString(),
    expiresAt: new Date(session.lastUsedAtMs + registry.idleTimeoutMs).toISOString(),
    webhookUrl,
    startedFrom: session.startedFrom,
    label: session.label,
    credentials: {
      programmeId: programme.id,
      single: single ? { apiKey: single.apiKey, secret: single.secret, userId: single.userId ?? '' } : null,
      multi: multi ? { apiKey: multi.apiKey, secret: multi.secret } : null,
      webhook: { apiKey: programme.webhook.apiKey, secret: programme.webhook.secret },
    },
  };
}
