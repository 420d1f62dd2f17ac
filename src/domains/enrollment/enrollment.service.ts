import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../core/errors.js';
import { assertTransition } from '../../lib/state-machine.js';
import { getUserRow } from '../users/users.service.js';
import { openTemplateAccounts } from '../accounts/account-templates.js';
import type { UserRow } from '../users/users.schema.js';
import {
  automaticDecision,
  completeReview,
  createInformationRequest,
  getInformationRequestRow,
  listInformationRequests,
  toDetail,
} from '../information-requests/information-requests.service.js';
import type { Caller } from '../../core/caller.js';
import type { InformationRequest, InformationRequestDetail, InformationRequestRow } from '../information-requests/information-requests.schema.js';
import type { RequirementSet } from '../information-requests/requirements.js';
import { enrollmentTransitions, STATE_FIELDS, stateOf, type EnrollmentState } from './enrollment.machine.js';
import { toEnrollment, type Enrollment, type EnrollmentRow } from './enrollment.schema.js';

// Enrollment (docs/onboarding.md#enrollment, interface 2.10, 3.3, 4.9, 4.10): created on first read or activation
// together with its DRAFT information request; the review of that request activates or rejects it; the control
// plane can force a review decision or revoke an ACTIVE enrollment (docs/onboarding.md#control-plane). The user's
// `enrollmentStatus` / `enrollmentStatusReason` (GET /v1/users) are written with every transition.

export function findEnrollmentRow(ctx: AppContext, userId: string): EnrollmentRow | undefined {
  return prepared<EnrollmentRow>(ctx.db, 'SELECT * FROM enrollments WHERE user_id = ?').get(userId);
}

function getEnrollmentRow(ctx: AppContext, id: string): EnrollmentRow | undefined {
  return prepared<EnrollmentRow>(ctx.db, 'SELECT * FROM enrollments WHERE id = ?').get(id);
}

// Fixture users are ACTIVE from the start (docs/decisions.md#fixture-enrollments): they were onboarded before the
// emulator's records begin. Their enrollment is written on first read as ACTIVE, with a COMPLETED / APPROVED request
// holding these placeholder values on file (source PREFILL, confirmed). No file exists behind the
// placeholder documents.
const ON_FILE_ADDRESS = { line1: '1 Sandbox Way', city: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' };
function onFileDocument(fileName: string) {
  return { fileName, contentType: 'application/pdf', sizeBytes: 0, pageCount: 0, sha256: null, onFile: true };
}
function onFileValues(set: RequirementSet, name: string): Record<string, unknown> {
  if (set === 'PERSON') {
    return {
      legalName: name,
      dateOfBirth: '1990-01-01',
      address: ON_FILE_ADDRESS,
      taxId: { country: 'US', number: '123-45-6789' },
      identityDocument: onFileDocument('identity-document-on-file.pdf'),
    };
  }
  return {
    businessName: name,
    registrationNumber: 'SBX-000001',
    incorporationCountry: 'US',
    address: ON_FILE_ADDRESS,
    beneficialOwners: [{ name: 'Sandbox Owner', dateOfBirth: '1980-01-01', ownershipPercent: 100 }],
    formationDocument: onFileDocument('formation-document-on-file.pdf'),
  };
}

function requireUser(ctx: AppContext, caller: Caller): UserRow {
  const user = getUserRow(ctx, caller.userId);
  if (!user || user.programme_id !== caller.programmeId) throw errors.notFound(`User ${caller.userId} not found`);
  return user;
}

/**
 * The caller's enrollment, created when missing (docs/onboarding.md#enrollment, interface 4.9, 4.10). Runs inside the
 * caller's transaction. A new enrollment is INACTIVE with a DRAFT request and marks the user's enrollment
 * as started, so the user appears in GET /v1/users (interface 4.11).
 */
export function ensureEnrollment(ctx: AppContext, caller: Caller): EnrollmentRow {
  const existing = findEnrollmentRow(ctx, caller.userId);
  if (existing) return existing;
  const user = requireUser(ctx, caller);
  const set: RequirementSet = user.type;
  if (user.enrollment_status === 'ACTIVE') {
    // Ids derived from the fixture user's id (usr_acme -> enr_acme, ir_acme): stable whatever the order
    // of first reads, and the id source is not consumed.
    const suffix = user.id.replace(/^usr_/, '');
    const createdAt = user.enrollment_started_at ?? user.created_at;
    const enrollmentId = `enr_${suffix}`;
    const request = createInformationRequest(ctx, {
      id: `ir_${suffix}`,
      programmeId: user.programme_id,
      userId: user.id,
      enrollmentId,
      set,
      name: user.name,
      createdAt,
      onFile: onFileValues(set, user.name),
    });
    insertEnrollment(ctx, { id: enrollmentId, user, state: 'ACTIVE', requestId: request.id, createdAt });
    return findEnrollmentRow(ctx, user.id)!;
  }
  const now = ctx.clock.nowIso();
  const enrollmentId = ctx.ids.id('enrollment');
  const request = createInformationRequest(ctx, {
    id: ctx.ids.id('informationRequest'),
    programmeId: user.programme_id,
    userId: user.id,
    enrollmentId,
    set,
    name: user.name,
    createdAt: now,
  });
  insertEnrollment(ctx, { id: enrollmentId, user, state: 'INACTIVE', requestId: request.id, createdAt: now });
  prepared(ctx.db, 'UPDATE users SET enrollment_started_at = ? WHERE id = ? AND enrollment_started_at IS NULL').run(now, user.id);
  return findEnrollmentRow(ctx, user.id)!;
}

function insertEnrollment(ctx: AppContext, input: { id: string; user: UserRow; state: EnrollmentState; requestId: string; createdAt: string }): void {
  const fields = STATE_FIELDS[input.state];
  prepared(
    ctx.db,
    `INSERT INTO enrollments (id, programme_id, user_id, status, reason, reason_detail, information_request_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
  ).run(input.id, input.user.programme_id, input.user.id, fields.status, fields.reason, input.requestId, input.createdAt, input.createdAt);
}

function view(ctx: AppContext, row: EnrollmentRow): Enrollment {
  return toEnrollment(row, getInformationRequestRow(ctx, row.information_request_id)!);
}

/** GET /v1/enrollment (interface 4.10). */
export function getEnrollment(ctx: AppContext, caller: Caller): Enrollment {
  return ctx.db.transaction(() => getEnrollmentNow(ctx, caller)).immediate();
}

function getEnrollmentNow(ctx: AppContext, caller: Caller): Enrollment {
  return view(ctx, ensureEnrollment(ctx, caller));
}

/**
 * POST /v1/enrollment/activate (interface 4.9): creates or resumes. The enrollment becomes ACTIVE only
 * through an approved information request, so this returns it ACTIVE once approved and otherwise the
 * INACTIVE enrollment whose request summary says what is outstanding (docs/onboarding.md#enrollment).
 */
export function activateEnrollment(ctx: AppContext, caller: Caller): Enrollment {
  return ctx.db.transaction(() => activateEnrollmentNow(ctx, caller)).immediate();
}

function activateEnrollmentNow(ctx: AppContext, caller: Caller): Enrollment {
  return view(ctx, ensureEnrollment(ctx, caller));
}

/**
 * GET /v1/information-requests (interface 4.7). A user whose enrollment has started (every fixture user)
 * has its request; its rows are written here if no read has written them yet. A user created through
 * POST /v1/auth/users that has not started enrollment has none.
 */
export function listEnrollmentInformationRequests(ctx: AppContext, caller: Caller): { data: InformationRequest[] } {
  return ctx.db.transaction(() => listEnrollmentInformationRequestsNow(ctx, caller)).immediate();
}

function listEnrollmentInformationRequestsNow(ctx: AppContext, caller: Caller): { data: InformationRequest[] } {
  const user = requireUser(ctx, caller);
  if (user.enrollment_started_at !== null) ensureEnrollment(ctx, caller);
  return listInformationRequests(ctx, caller);
}

/** One move of the enrollment machine, mirrored onto the user's enrollment status and reason. */
function transition(ctx: AppContext, row: EnrollmentRow, to: EnrollmentState, reasonDetail: string | null): void {
  assertTransition('Enrollment', enrollmentTransitions, stateOf(row.status, row.reason), to);
  const fields = STATE_FIELDS[to];
  const now = ctx.clock.nowIso();
  prepared(ctx.db, 'UPDATE enrollments SET status = ?, reason = ?, reason_detail = ?, updated_at = ? WHERE id = ?').run(
    fields.status,
    fields.reason,
    reasonDetail,
    now,
    row.id,
  );
  prepared(ctx.db, 'UPDATE users SET enrollment_status = ?, enrollment_status_reason = ?, updated_at = ? WHERE id = ?').run(
    fields.status,
    fields.reason,
    now,
    row.user_id,
  );
  // docs/onboarding.md#accounts-of-onboarded-users: every path to ACTIVE goes through here
  if (to === 'ACTIVE') openTemplateAccounts(ctx, getUserRow(ctx, row.user_id)!);
}

/** Apply a completed review to the enrollment it was for (approval activates; rejection records why). */
function applyDecision(ctx: AppContext, request: InformationRequestRow, decision: 'APPROVED' | 'REJECTED', detail: string | null): void {
  const enrollment = getEnrollmentRow(ctx, request.subject_id);
  if (!enrollment || enrollment.information_request_id !== request.id) return;
  if (decision === 'APPROVED') transition(ctx, enrollment, 'ACTIVE', null);
  else transition(ctx, enrollment, 'ACTIVATION_REJECTED', detail ?? `The review of information request ${request.id} rejected the enrollment`);
}

/** Job handler (REVIEW_JOB): the automatic review after `timeline.reviewMs` (docs/decisions.md#submit-and-review). */
export function runEnrollmentReview(ctx: AppContext, payload: Record<string, unknown>): void {
  const row = getInformationRequestRow(ctx, String(payload.informationRequestId));
  // A decision forced through the control plane may have completed the request already.
  if (!row || row.status !== 'PENDING_REVIEW') return;
  const outcome = automaticDecision(ctx, row);
  applyDecision(ctx, completeReview(ctx, row, outcome.decision), outcome.decision, outcome.detail);
}

/**
 * Control plane (docs/onboarding.md#control-plane): force the review outcome of a request that is PROCESSING_SUBMISSION
 * or PENDING_REVIEW; any other status is a 409. Pending review jobs of the request are canceled.
 */
export function forceReviewDecision(ctx: AppContext, informationRequestId: string, decision: 'APPROVED' | 'REJECTED'): InformationRequestDetail {
  return ctx.db.transaction(() => forceReviewDecisionNow(ctx, informationRequestId, decision)).immediate();
}

function forceReviewDecisionNow(ctx: AppContext, informationRequestId: string, decision: 'APPROVED' | 'REJECTED'): InformationRequestDetail {
  const row = getInformationRequestRow(ctx, informationRequestId);
  if (!row) throw errors.notFound(`Information request ${informationRequestId} not found`);
  if (row.status !== 'PROCESSING_SUBMISSION' && row.status !== 'PENDING_REVIEW') {
    throw errors.conflict(
      `Information request ${row.id} is ${row.status}${row.decision ? ` (decision ${row.decision})` : ''}; a decision can be forced only while it is PROCESSING_SUBMISSION or PENDING_REVIEW`,
    );
  }
  const completed = completeReview(ctx, row, decision);
  applyDecision(
    ctx,
    completed,
    decision,
    decision === 'REJECTED' ? `The review of information request ${row.id} rejected the enrollment (decision forced through the emulator control plane)` : null,
  );
  return toDetail(ctx, completed);
}

/** Control plane (docs/onboarding.md#control-plane): ACTIVE -> INACTIVE with reason REVOKED; otherwise 409. */
export function revokeEnrollment(ctx: AppContext, userId: string, reasonDetail?: string): Enrollment {
  return ctx.db.transaction(() => revokeEnrollmentNow(ctx, userId, reasonDetail)).immediate();
}

function revokeEnrollmentNow(ctx: AppContext, userId: string, reasonDetail?: string): Enrollment {
  const user = getUserRow(ctx, userId);
  if (!user) throw errors.notFound(`User ${userId} not found`);
  const row = ensureEnrollment(ctx, { programmeId: user.programme_id, userId });
  const state = stateOf(row.status, row.reason);
  if (state !== 'ACTIVE') {
    throw errors.conflict(`The enrollment of user ${userId} is ${row.status}${row.reason ? ` (reason ${row.reason})` : ''}; only an ACTIVE enrollment can be revoked`);
  }
  transition(ctx, row, 'REVOKED', reasonDetail ?? 'The enrollment was revoked through the emulator control plane');
  return view(ctx, findEnrollmentRow(ctx, userId)!);
}

/**
 * Activation gates money (docs/decisions.md#enrollment-gate): payouts and intent commits of a user whose enrollment is
 * not ACTIVE are refused with 403 FORBIDDEN. Reads the user's enrollment status, which every transition writes;
 * fixture users start ACTIVE, users created through POST /v1/auth/users start INACTIVE.
 */
export function assertEnrollmentActive(ctx: AppContext, userId: string): void {
  const user = getUserRow(ctx, userId);
  if (user && user.enrollment_status === 'ACTIVE') return;
  const state = user ? `${user.enrollment_status}${user.enrollment_status_reason ? `, reason ${user.enrollment_status_reason}` : ''}` : 'unknown user';
  throw errors.forbidden(
    `The enrollment of user ${userId} is not active (${state}); moving money needs an ACTIVE enrollment: complete the information request of GET /v1/enrollment, submit it and wait for approval`,
  );
}
