import { z } from 'zod';
import { instant } from '../../http/formats.js';
import { validationErrorSchema } from '../../core/errors.js';
import { ENTRY_SOURCES, REQUIREMENT_KINDS, REQUIREMENT_STATUSES, type RequirementSet, type ValidationStatus } from './requirements.js';
import { INFORMATION_REQUEST_STATUSES, type InformationRequestStatus } from './information-requests.machine.js';

// Interface 2.9 (information request: list item and detail) and docs/onboarding.md#requirements-and-value-formats
// (requirement and entry shapes).

export const DECISIONS = ['PENDING', 'APPROVED', 'REJECTED'] as const;
export type Decision = (typeof DECISIONS)[number];

export const informationRequestSchema = z
  .object({
    id: z.string(),
    status: z.enum(INFORMATION_REQUEST_STATUSES),
    subjectType: z.enum(['ENROLLMENT']),
    subjectId: z.string().describe('The enrollment id'),
    validationStatus: z.enum(REQUIREMENT_STATUSES).describe('Every rule checkable from the request alone; recomputed on every write'),
    createdAt: instant(),
    updatedAt: instant(),
    decision: z.enum(DECISIONS).nullable().describe('null until the request reaches review'),
  })
  .meta({ id: 'InformationRequest' });
export type InformationRequest = z.infer<typeof informationRequestSchema>;

export const requirementEntrySchema = z
  .object({
    value: z.unknown().describe('The value as written; a document reads back as { fileName, contentType, sizeBytes, pageCount, sha256 }'),
    source: z.enum(ENTRY_SOURCES),
    confirmed: z.boolean().describe('false only for a value the service prefilled and the caller has not written'),
  })
  .meta({ id: 'InformationRequestEntry' });

export const requirementSchema = z
  .object({
    key: z.string(),
    label: z.string(),
    kind: z.enum(REQUIREMENT_KINDS),
    required: z.boolean(),
    status: z.enum(REQUIREMENT_STATUSES),
    entry: requirementEntrySchema.nullable(),
    errors: z.array(validationErrorSchema),
  })
  .meta({ id: 'InformationRequirement' });
export type Requirement = z.infer<typeof requirementSchema>;

export const informationRequestDetailSchema = informationRequestSchema
  .extend({
    title: z.string().nullable(),
    requirements: z.array(requirementSchema),
  })
  .meta({ id: 'InformationRequestDetail' });
export type InformationRequestDetail = z.infer<typeof informationRequestDetailSchema>;

// interface 4.7: the list is `{ data }` only, without the paging envelope
export const informationRequestListSchema = z.object({ data: z.array(informationRequestSchema) }).strict().meta({ id: 'InformationRequestList' });

export const MAX_ENTRIES_PER_WRITE = 20;

// interface 2.9 / 4.8, docs/onboarding.md#writing-entries: `{ entries: [{ key, value }] }`; the value's format depends
// on the key (checked by the service so that an unknown key is reported as `entries.N.key`).
export const writeEntriesBody = z
  .object({
    entries: z
      .array(
        z
          .object({
            key: z.string().min(1).max(64),
            value: z.unknown().describe('The requirement value; null clears the entry'),
          })
          .strict(),
      )
      .min(1)
      .max(MAX_ENTRIES_PER_WRITE),
  })
  .strict()
  .meta({ id: 'InformationRequestEntriesWrite' });
export type WriteEntriesInput = z.infer<typeof writeEntriesBody>;

export const informationRequestParams = z.object({ informationRequestId: z.string().min(1).max(128) });

export interface InformationRequestRow {
  id: string;
  programme_id: string;
  user_id: string;
  subject_type: 'ENROLLMENT';
  subject_id: string;
  requirement_set: RequirementSet;
  status: InformationRequestStatus;
  validation_status: ValidationStatus;
  decision: Decision | null;
  title: string | null;
  evaluation: string;
  submitted_at: string | null;
  decided_at: string | null;
  created_at: string;
  created_at_ms: number;
  updated_at: string;
}

export interface EntryRow {
  request_id: string;
  key: string;
  value: string;
  source: 'CALLER' | 'PREFILL';
  confirmed: number;
  updated_at: string;
}

export function toInformationRequest(row: InformationRequestRow): InformationRequest {
  return {
    id: row.id,
    status: row.status,
    subjectType: row.subject_type,
    subjectId: row.subject_id,
    validationStatus: row.validation_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    decision: row.decision,
  };
}
