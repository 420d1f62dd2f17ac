import { z } from 'zod';
import { emailAddress, instant } from '../../http/formats.js';
import { pageQuery } from '../../http/pagination.js';

// interface 2.11
export const userSchema = z
  .object({
    userId: z.string(),
    externalId: z.string(),
    type: z.enum(['PERSON', 'BUSINESS']),
    name: z.string(),
    email: z.string().optional(),
    enrollmentStatus: z.enum(['ACTIVE', 'INACTIVE']),
    enrollmentStatusReason: z.string().optional(),
    createdAt: instant(),
    updatedAt: instant(),
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof userSchema>;

// POST /v1/auth/users (docs/decisions.md#users-create)
export const createUserBody = z
  .object({
    externalId: z.string().min(1).max(128),
    type: z.enum(['PERSON', 'BUSINESS']),
    // Whitespace-only names are refused; surrounding spaces are dropped (docs/decisions.md#blank-names).
    name: z.string().trim().min(1, 'name must not be empty or only spaces').max(200),
    email: emailAddress().optional(),
  })
  .strict();
export type CreateUserInput = z.infer<typeof createUserBody>;

export const listUsersQuery = z.object(pageQuery(25)); // interface 4.11: 1-25

export interface UserRow {
  id: string;
  programme_id: string;
  external_id: string;
  type: 'PERSON' | 'BUSINESS';
  name: string;
  email: string | null;
  enrollment_status: 'ACTIVE' | 'INACTIVE';
  enrollment_status_reason: string | null;
  enrollment_started_at: string | null;
  created_at: string;
  created_at_ms: number;
  updated_at: string;
}

export function toUser(row: UserRow): User {
  const user: User = {
    userId: row.id,
    externalId: row.external_id,
    type: row.type,
    name: row.name,
    enrollmentStatus: row.enrollment_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.email !== null) user.email = row.email;
  if (row.enrollment_status_reason !== null) user.enrollmentStatusReason = row.enrollment_status_reason;
  return user;
}
