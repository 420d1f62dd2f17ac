import type { TransitionTable } from '../../lib/state-machine.js';

// Interface 3.3 gives the statuses (INACTIVE, ACTIVE) and reasons (REVOKED, ACTIVATION_REJECTED) but no
// transitions. The emulator's lifecycle, as data (a transition table), over (status, reason) pairs
// (docs/onboarding.md#enrollment, docs/decisions.md#enrollment-final-states):
//   INACTIVE             (INACTIVE, null)                 created, waiting for an approved information request
//   ACTIVE               (ACTIVE, null)                   the review approved the request
//   ACTIVATION_REJECTED  (INACTIVE, ACTIVATION_REJECTED)  the review rejected the request
//   REVOKED              (INACTIVE, REVOKED)              revoked through the control plane
// Rejection and revocation are final in the emulator: a new user (or /_emulator/reset) starts over.
export const ENROLLMENT_STATUSES = ['INACTIVE', 'ACTIVE'] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

export const ENROLLMENT_REASONS = ['REVOKED', 'ACTIVATION_REJECTED'] as const;
export type EnrollmentReason = (typeof ENROLLMENT_REASONS)[number];

export type EnrollmentState = 'INACTIVE' | 'ACTIVE' | 'ACTIVATION_REJECTED' | 'REVOKED';

export const enrollmentTransitions: TransitionTable<EnrollmentState> = {
  INACTIVE: ['ACTIVE', 'ACTIVATION_REJECTED'],
  ACTIVE: ['REVOKED'],
  ACTIVATION_REJECTED: [],
  REVOKED: [],
};

/** The status and reason each state is stored and reported as (enrollment and users.enrollment_status*). */
export const STATE_FIELDS: Readonly<Record<EnrollmentState, { status: EnrollmentStatus; reason: EnrollmentReason | null }>> = {
  INACTIVE: { status: 'INACTIVE', reason: null },
  ACTIVE: { status: 'ACTIVE', reason: null },
  ACTIVATION_REJECTED: { status: 'INACTIVE', reason: 'ACTIVATION_REJECTED' },
  REVOKED: { status: 'INACTIVE', reason: 'REVOKED' },
};

export function stateOf(status: EnrollmentStatus, reason: EnrollmentReason | null): EnrollmentState {
  if (status === 'ACTIVE') return 'ACTIVE';
  return reason ?? 'INACTIVE';
}
