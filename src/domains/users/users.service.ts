import { prepared } from '../../db/connection.js';
import { readPage, type PageRequest } from '../../db/page.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../core/errors.js';
import type { Page } from '../../core/page.js';
import { toUser, type CreateUserInput, type User, type UserRow } from './users.schema.js';

export function getUserRow(ctx: AppContext, userId: string): UserRow | undefined {
  return prepared<UserRow>(ctx.db, 'SELECT * FROM users WHERE id = ?').get(userId);
}

/**
 * docs/decisions.md#users-create: the same externalId again returns the existing user (created: false), never a
 * duplicate.
 */
export function createUser(ctx: AppContext, programmeId: string, input: CreateUserInput): { user: User; created: boolean } {
  // IMMEDIATE: the existence check and the insert must not race another process on a database file
  // (a deferred transaction that read first cannot take the write lock once another writer committed).
  return ctx.db.transaction(() => createUserNow(ctx, programmeId, input)).immediate();
}

function createUserNow(ctx: AppContext, programmeId: string, input: CreateUserInput): { user: User; created: boolean } {
  const existing = prepared<UserRow>(ctx.db, 'SELECT * FROM users WHERE programme_id = ? AND external_id = ?').get(programmeId, input.externalId);
  if (existing) {
    // The same externalId names the same person or business: a replay with another name, type or email is
    // a conflict, never a silent 200 with the stored user (docs/decisions.md#users-create).
    const differs = [
      existing.type !== input.type ? `type ${existing.type}` : null,
      existing.name !== input.name ? `name "${existing.name}"` : null,
      input.email !== undefined && existing.email !== input.email ? `email ${existing.email ?? '(none)'}` : null,
    ].filter((part): part is string => part !== null);
    if (differs.length > 0) {
      throw errors.conflict(`externalId ${input.externalId} already names user ${existing.id} with ${differs.join(', ')}; send the same values to get it back, or use another externalId`);
    }
    return { user: toUser(existing), created: false };
  }
  const id = ctx.ids.id('user');
  const now = ctx.clock.nowIso();
  prepared(
    ctx.db,
    `INSERT INTO users (id, programme_id, external_id, type, name, email, enrollment_status, created_at, created_at_ms, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'INACTIVE', ?, ?, ?)`,
  ).run(id, programmeId, input.externalId, input.type, input.name, input.email ?? null, now, Date.parse(now), now);
  return { user: toUser(getUserRow(ctx, id)!), created: true };
}

/** Interface 4.11: users whose enrollment has started, newest first (ties by id). */
export function listUsers(ctx: AppContext, programmeId: string, page: PageRequest): Page<User> {
  return readPage<UserRow, User>(
    ctx.db,
    { columns: '*', from: 'users WHERE programme_id = ? AND enrollment_started_at IS NOT NULL', orderBy: 'created_at_ms DESC, id DESC' },
    [programmeId],
    page,
    toUser,
  );
}
