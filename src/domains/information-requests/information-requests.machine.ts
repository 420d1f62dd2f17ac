import type { TransitionTable } from '../../lib/state-machine.js';

// Interface 3.4 names the states; docs/onboarding.md#submission-and-review fixes the moves: a DRAFT is submitted into
// PROCESSING_SUBMISSION, a job moves it to PENDING_REVIEW (decision PENDING), the review (a job after
// `timeline.reviewMs`, or a decision forced through the control plane, which may also cut
// PROCESSING_SUBMISSION short) completes it with APPROVED or REJECTED. A request not yet decided (DRAFT,
// PROCESSING_SUBMISSION, PENDING_REVIEW) can be CANCELED through the control plane
// (docs/decisions.md#canceled-information-requests); a decided or canceled one is final.
export const INFORMATION_REQUEST_STATUSES = ['DRAFT', 'PROCESSING_SUBMISSION', 'PENDING_REVIEW', 'COMPLETED', 'CANCELED'] as const;
export type InformationRequestStatus = (typeof INFORMATION_REQUEST_STATUSES)[number];

export const informationRequestTransitions: TransitionTable<InformationRequestStatus> = {
  DRAFT: ['PROCESSING_SUBMISSION', 'CANCELED'],
  PROCESSING_SUBMISSION: ['PENDING_REVIEW', 'COMPLETED', 'CANCELED'],
  PENDING_REVIEW: ['COMPLETED', 'CANCELED'],
  COMPLETED: [],
  CANCELED: [],
};

/** Entries can be written and the request submitted only while it is a DRAFT (docs/errors.md: 409 otherwise). */
export const EDITABLE_STATUS: InformationRequestStatus = 'DRAFT';
