import { z } from 'zod';
import { instant } from '../../http/formats.js';
import { INFORMATION_REQUEST_STATUSES } from '../information-requests/information-requests.machine.js';
import { DECISIONS, type InformationRequestRow } from '../information-requests/information-requests.schema.js';
import { REQUIREMENT_STATUSES } from '../information-requests/requirements.js';
import { ENROLLMENT_REASONS, ENROLLMENT_STATUSES, type EnrollmentReason, type EnrollmentStatus } from './enrollment.machine.js';

// Interface 2.10 plus the two fields it leaves unnamed, named by docs/onboarding.md#enrollment: `reasonDetail` and the
// request summary `informationRequest: { id, status, validationStatus, decision }`.

export const informationRequestSummarySchema = z
  .object({
    id: z.string(),
    status: z.enum(INFORMATION_REQUEST_STATUSES),
    validationStatus: z.enum(REQUIREMENT_STATUSES),
    decision: z.enum(DECISIONS).nullable(),
  })
  .meta({ id: 'EnrollmentInformationRequestSummary' });

export const enrollmentSchema = z
  .object({
    id: z.string(),
    createdAt: instant(),
    updatedAt: instant(),
    status: z.enum(ENROLLMENT_STATUSES),
    reason: z.enum(ENROLLMENT_REASONS).nullable(),
    reasonDetail: z.string().nullable().describe('Human-readable detail of the reason; null when there is no reason'),
    informationRequest: informationRequestSummarySchema,
  })
  .meta({ id: 'Enrollment' });
export type Enrollment = z.infer<typeof enrollmentSchema>;

// Control plane (docs/onboarding.md#control-plane)
export const forcedDecisionBody = z
  .object({ decision: z.enum(['APPROVED', 'REJECTED'], { error: 'decision must be APPROVED or REJECTED' }) })
  .strict()
  .meta({ id: 'EmulatorForcedDecision' });

export const revokeBody = z
  .object({ reasonDetail: z.string().trim().min(1).max(500).optional().describe('Replaces the default reasonDetail') })
  .strict()
  .optional();

export const decisionParams = z.object({ informationRequestId: z.string().min(1).max(128) });
export const revokeParams = z.object({ userId: z.string().min(1).max(128) });

export interface EnrollmentRow {
  id: string;
  programme_id: string;
  user_id: string;
  status: EnrollmentStatus;
  reason: EnrollmentReason | null;
  reason_detail: string | null;
  information_request_id: string;
  created_at: string;
  updated_at: string;
}

export function toEnrollment(row: EnrollmentRow, request: InformationRequestRow): Enrollment {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    status: row.status,
    reason: row.reason,
    reasonDetail: row.reason_detail,
    informationRequest: {
      id: request.id,
      status: request.status,
      validationStatus: request.validation_status,
      decision: request.decision,
    },
  };
}
