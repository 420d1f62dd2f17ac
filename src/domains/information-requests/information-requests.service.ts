import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import type { Caller } from '../../core/caller.js';
import { errors, ServiceError, type ValidationError } from '../../core/errors.js';
import { assertTransition } from '../../lib/state-machine.js';
import { cancelJobs, scheduleJob } from '../../scheduler/scheduler.js';
import { decodeDocumentValue, type DecodedDocument, type DocumentMetadata } from './documents.js';
import { EDITABLE_STATUS, informationRequestTransitions, type InformationRequestStatus } from './information-requests.machine.js';
import {
  toInformationRequest,
  type Decision,
  type EntryRow,
  type InformationRequest,
  type InformationRequestDetail,
  type InformationRequestRow,
  type Requirement,
  type WriteEntriesInput,
} from './information-requests.schema.js';
import {
  DOCUMENT_KEYS,
  evaluate,
  nameKeyOf,
  REQUIREMENTS,
  requirementOf,
  submissionErrors,
  type Evaluation,
  type RequirementSet,
  type StoredEntry,
} from './requirements.js';

// Information requests (docs/onboarding.md): creation with prefilled values, the entry write (all entries of a
// call or none), submission with its outside-data check, and the first review step. Completing the review
// is driven by the subject's domain (enrollment.service.ts), which applies the decision to the enrollment.

/** Job: PROCESSING_SUBMISSION -> PENDING_REVIEW (handler: advanceToReview). */
export const SUBMISSION_PROCESSING_JOB = 'information-request.process-submission';
/** Job: PENDING_REVIEW -> COMPLETED after `timeline.reviewMs` (handler in enrollment.service.ts). */
export const REVIEW_JOB = 'information-request.review';

/** docs/decisions.md#review-magic-names: the outside-data check of submission (any case). */
const ALREADY_REGISTERED = 'ALREADY REGISTERED';
/**
 * docs/decisions.md#review-magic-names: the review rejects a legal or business name containing this word (any case;
 * documented).
 */
const REJECT_WORD = 'REJECT';

/** A non-document value larger than this (as JSON) is refused: requirement values are short. */
export const MAX_VALUE_JSON_BYTES = 16 * 1024;

export function getInformationRequestRow(ctx: AppContext, id: string): InformationRequestRow | undefined {
  return prepared<InformationRequestRow>(ctx.db, 'SELECT * FROM information_requests WHERE id = ?').get(id);
}

/** docs/decisions.md#status-codes: an unknown id or one of another programme is 404; another user's request is 403. */
export function requireOwnRequest(ctx: AppContext, caller: Caller, id: string): InformationRequestRow {
  const row = getInformationRequestRow(ctx, id);
  if (!row || row.programme_id !== caller.programmeId) throw errors.notFound(`Information request ${id} not found`);
  if (row.user_id !== caller.userId) throw errors.forbidden(`Information request ${id} belongs to another user`);
  return row;
}

function entriesOf(ctx: AppContext, requestId: string): Map<string, StoredEntry> {
  const rows = prepared<EntryRow>(ctx.db, 'SELECT * FROM information_request_entries WHERE request_id = ?').all(requestId);
  return new Map(rows.map((row) => [row.key, { value: JSON.parse(row.value) as unknown, source: row.source, confirmed: row.confirmed === 1 }]));
}

function putEntry(ctx: AppContext, requestId: string, key: string, entry: StoredEntry, now: string): void {
  prepared(
    ctx.db,
    `INSERT INTO information_request_entries (request_id, key, value, source, confirmed, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (request_id, key) DO UPDATE SET value = excluded.value, source = excluded.source, confirmed = excluded.confirmed, updated_at = excluded.updated_at`,
  ).run(requestId, key, JSON.stringify(entry.value), entry.source, entry.confirmed ? 1 : 0, now);
}

function today(ctx: AppContext): string {
  return ctx.clock.nowIso().slice(0, 10);
}

function storeEvaluation(ctx: AppContext, requestId: string, evaluation: Evaluation, now: string): void {
  prepared(ctx.db, 'UPDATE information_requests SET validation_status = ?, evaluation = ?, updated_at = ? WHERE id = ?').run(
    evaluation.validationStatus,
    JSON.stringify(evaluation.byKey),
    now,
    requestId,
  );
}

export interface NewInformationRequest {
  id: string;
  programmeId: string;
  userId: string;
  enrollmentId: string;
  set: RequirementSet;
  /** The user's name, prefilled into legalName/businessName. */
  name: string;
  createdAt: string;
  /**
   * Values already on file (fixture users, onboarded before the emulator started): the request is created
   * COMPLETED and APPROVED with these entries, confirmed. Otherwise it is a DRAFT with the name prefilled.
   */
  onFile?: Record<string, unknown>;
}

export function createInformationRequest(ctx: AppContext, input: NewInformationRequest): InformationRequestRow {
  const onFile = input.onFile !== undefined;
  const title = `${input.set === 'PERSON' ? 'Personal' : 'Business'} information for the enrollment of ${input.name}`;
  prepared(
    ctx.db,
    `INSERT INTO information_requests (id, programme_id, user_id, subject_type, subject_id, requirement_set, status, validation_status,
       decision, title, evaluation, submitted_at, decided_at, created_at, created_at_ms, updated_at)
     VALUES (?, ?, ?, 'ENROLLMENT', ?, ?, ?, 'MISSING', ?, ?, '{}', ?, ?, ?, ?, ?)`,
  ).run(
    input.id,
    input.programmeId,
    input.userId,
    input.enrollmentId,
    input.set,
    onFile ? 'COMPLETED' : 'DRAFT',
    onFile ? 'APPROVED' : null,
    title,
    onFile ? input.createdAt : null,
    onFile ? input.createdAt : null,
    input.createdAt,
    Date.parse(input.createdAt),
    input.createdAt,
  );
  const entries = new Map<string, StoredEntry>();
  if (input.onFile) {
    for (const [key, value] of Object.entries(input.onFile)) entries.set(key, { value, source: 'PREFILL', confirmed: true });
  } else {
    for (const definition of REQUIREMENTS[input.set]) {
      if (definition.prefillFromName) entries.set(definition.key, { value: input.name, source: 'PREFILL', confirmed: false });
    }
  }
  for (const [key, entry] of entries) putEntry(ctx, input.id, key, entry, input.createdAt);
  storeEvaluation(ctx, input.id, evaluate(input.set, entries, today(ctx)), input.createdAt);
  return getInformationRequestRow(ctx, input.id)!;
}

/** Interface 4.7: the caller's requests, newest first, as `{ data }`. */
export function listInformationRequests(ctx: AppContext, caller: Caller): { data: InformationRequest[] } {
  const rows = prepared<InformationRequestRow>(
    ctx.db,
    'SELECT * FROM information_requests WHERE user_id = ? AND programme_id = ? ORDER BY created_at_ms DESC, id DESC',
  ).all(caller.userId, caller.programmeId);
  return { data: rows.map(toInformationRequest) };
}

export function getInformationRequestDetail(ctx: AppContext, caller: Caller, id: string): InformationRequestDetail {
  return toDetail(ctx, requireOwnRequest(ctx, caller, id));
}

/** The detail payload (interface 4.8): the list item plus title and requirements in a fixed order. */
export function toDetail(ctx: AppContext, row: InformationRequestRow): InformationRequestDetail {
  const entries = entriesOf(ctx, row.id);
  const stored = JSON.parse(row.evaluation) as Evaluation['byKey'];
  const requirements: Requirement[] = REQUIREMENTS[row.requirement_set].map((definition) => {
    const entry = entries.get(definition.key);
    const result = stored[definition.key] ?? { status: 'MISSING' as const, errors: [] };
    return {
      key: definition.key,
      label: definition.label,
      kind: definition.kind,
      required: definition.required,
      status: result.status,
      entry: entry ? { value: entry.value, source: entry.source, confirmed: entry.confirmed } : null,
      errors: result.errors,
    };
  });
  return { ...toInformationRequest(row), title: row.title, requirements };
}

function assertEditable(row: InformationRequestRow): void {
  if (row.status !== EDITABLE_STATUS) {
    throw errors.conflict(
      `Information request ${row.id} is ${row.status}; entries can be written and the request submitted only while it is DRAFT`,
      'INFORMATION_REQUEST_NOT_EDITABLE',
    );
  }
}

function invalidEntries(validationErrors: ValidationError[]): ServiceError {
  const first = validationErrors[0]!;
  const rest = validationErrors.length > 1 ? ` (and ${validationErrors.length - 1} more)` : '';
  return errors.invalid(`Invalid entries: ${first.message}${rest}. Nothing was written.`, validationErrors);
}

/**
 * The synchronous checks of an entry write, made before any document is parsed: ownership (403/404),
 * editability (409), then every entry's key and value envelope (400, nothing written). Returns the
 * decoded documents to inspect, by their place in the body (`entries.N.value`).
 */
export function prepareEntryWrite(ctx: AppContext, caller: Caller, id: string, input: WriteEntriesInput): Map<string, DecodedDocument> {
  const row = requireOwnRequest(ctx, caller, id);
  assertEditable(row);
  return checkEntries(row, input, true);
}

function checkEntries(row: InformationRequestRow, input: WriteEntriesInput, decodeDocuments: boolean): Map<string, DecodedDocument> {
  const accepted = REQUIREMENTS[row.requirement_set].map((definition) => definition.key);
  const problems: ValidationError[] = [];
  const documents = new Map<string, DecodedDocument>();
  const seen = new Map<string, number>();
  input.entries.forEach((entry, index) => {
    const keyRef = `entries.${index}.key`;
    const valueRef = `entries.${index}.value`;
    const definition = requirementOf(row.requirement_set, entry.key);
    if (!definition) {
      problems.push({
        type: 'InvalidValue',
        fieldRef: keyRef,
        message: `${keyRef} "${entry.key}" is not a requirement of this ${row.requirement_set} information request; accepted keys: ${accepted.join(', ')}`,
      });
      return;
    }
    const earlier = seen.get(entry.key);
    if (earlier !== undefined) {
      problems.push({ type: 'InvalidValue', fieldRef: keyRef, message: `${keyRef} "${entry.key}" was already given in entries.${earlier}; send each key once per call` });
      return;
    }
    seen.set(entry.key, index);
    if (entry.value === undefined) {
      problems.push({ type: 'MissingValue', fieldRef: valueRef, message: `${valueRef} is required (null clears the entry)` });
      return;
    }
    if (entry.value === null) return;
    if (definition.kind === 'DOCUMENT') {
      if (!decodeDocuments) return;
      const decoded = decodeDocumentValue(entry.value, valueRef);
      problems.push(...decoded.errors);
      if (decoded.document) documents.set(valueRef, decoded.document);
      return;
    }
    if (Buffer.byteLength(JSON.stringify(entry.value)) > MAX_VALUE_JSON_BYTES) {
      problems.push({ type: 'InvalidValue', fieldRef: valueRef, message: `${valueRef} is larger than ${MAX_VALUE_JSON_BYTES} bytes as JSON; requirement values are short` });
    }
  });
  if (problems.length > 0) throw invalidEntries(problems);
  return documents;
}

/**
 * Entry write (docs/onboarding.md#writing-entries), inside the caller's transaction: every entry of the call applies or
 * none does; writing a value confirms it (source CALLER); null clears it. Requirement statuses and
 * `validationStatus` are recomputed. `documents` holds the inspected documents by `entries.N.value`.
 */
export function writeEntries(
  ctx: AppContext,
  caller: Caller,
  id: string,
  input: WriteEntriesInput,
  documents: ReadonlyMap<string, DocumentMetadata>,
): InformationRequestDetail {
  return ctx.db.transaction(() => writeEntriesNow(ctx, caller, id, input, documents)).immediate();
}

function writeEntriesNow(
  ctx: AppContext,
  caller: Caller,
  id: string,
  input: WriteEntriesInput,
  documents: ReadonlyMap<string, DocumentMetadata>,
): InformationRequestDetail {
  // Checked again inside the transaction: the request may have been submitted while documents were parsed.
  const row = requireOwnRequest(ctx, caller, id);
  assertEditable(row);
  checkEntries(row, input, false);
  const now = ctx.clock.nowIso();
  const entries = entriesOf(ctx, id);
  input.entries.forEach((entry, index) => {
    if (entry.value === null) {
      prepared(ctx.db, 'DELETE FROM information_request_entries WHERE request_id = ? AND key = ?').run(id, entry.key);
      entries.delete(entry.key);
      return;
    }
    let value: unknown = entry.value;
    if (DOCUMENT_KEYS.has(entry.key)) {
      const metadata = documents.get(`entries.${index}.value`);
      if (!metadata) throw errors.internal(`document entries.${index}.value was not inspected before the write`);
      value = metadata;
    }
    const stored: StoredEntry = { value, source: 'CALLER', confirmed: true };
    putEntry(ctx, id, entry.key, stored, now);
    entries.set(entry.key, stored);
  });
  storeEvaluation(ctx, id, evaluate(row.requirement_set, entries, today(ctx)), now);
  return toDetail(ctx, getInformationRequestRow(ctx, id)!);
}

function move(ctx: AppContext, row: InformationRequestRow, to: InformationRequestStatus, changes: { decision?: Decision | null; submittedAt?: string; decidedAt?: string } = {}): void {
  assertTransition('Information request', informationRequestTransitions, row.status, to);
  const now = ctx.clock.nowIso();
  prepared(
    ctx.db,
    `UPDATE information_requests SET status = ?, decision = ?, submitted_at = COALESCE(?, submitted_at), decided_at = COALESCE(?, decided_at), updated_at = ?
     WHERE id = ?`,
  ).run(to, changes.decision === undefined ? row.decision : changes.decision, changes.submittedAt ?? null, changes.decidedAt ?? null, now, row.id);
}

/** The caller's name entry (legalName or businessName) of a request, when it is a string. */
export function subjectNameOf(ctx: AppContext, row: InformationRequestRow): string | undefined {
  const entry = entriesOf(ctx, row.id).get(nameKeyOf(row.requirement_set));
  return typeof entry?.value === 'string' ? entry.value : undefined;
}

/**
 * Submission (docs/onboarding.md#submission-and-review): not VALID -> 400 with the failing requirements; a business
 * name containing ALREADY REGISTERED -> 400 InvalidValue on businessName, the request stays DRAFT (and VALID: the check
 * uses outside data, interface 2.9). Otherwise PROCESSING_SUBMISSION, and the review starts as a job.
 */
export function submitInformationRequest(ctx: AppContext, caller: Caller, id: string): InformationRequestDetail {
  return ctx.db.transaction(() => submitInformationRequestNow(ctx, caller, id)).immediate();
}

function submitInformationRequestNow(ctx: AppContext, caller: Caller, id: string): InformationRequestDetail {
  const row = requireOwnRequest(ctx, caller, id);
  assertEditable(row);
  const entries = entriesOf(ctx, id);
  // Recomputed with today's date: an age rule can change with the emulated clock since the last write.
  const evaluation = evaluate(row.requirement_set, entries, today(ctx));
  if (evaluation.validationStatus !== 'VALID') {
    const failing = submissionErrors(row.requirement_set, entries, evaluation);
    throw errors.invalid(
      `Information request ${id} is ${evaluation.validationStatus} and cannot be submitted: ${failing.length} requirement problem(s), first: ${failing[0]?.message ?? 'unknown'}`,
      failing,
    );
  }
  if (row.requirement_set === 'BUSINESS') {
    const name = subjectNameOf(ctx, row) ?? '';
    if (name.toUpperCase().includes(ALREADY_REGISTERED)) {
      const message = `businessName "${name}" is already registered to another user; enter the business's own registered name (the request stays DRAFT)`;
      throw errors.invalid(message, [{ type: 'InvalidValue', fieldRef: 'businessName', message }]);
    }
  }
  const now = ctx.clock.nowIso();
  storeEvaluation(ctx, id, evaluation, now);
  move(ctx, row, 'PROCESSING_SUBMISSION', { submittedAt: now });
  // Processing is immediate on the emulated clock; the review delay (docs/decisions.md#submit-and-review) counts from
  // submission.
  scheduleJob(ctx, SUBMISSION_PROCESSING_JOB, ctx.clock.nowMs(), { informationRequestId: id });
  return toDetail(ctx, getInformationRequestRow(ctx, id)!);
}

/** Job handler: PROCESSING_SUBMISSION -> PENDING_REVIEW (decision PENDING); schedules the review. */
export function advanceToReview(ctx: AppContext, payload: Record<string, unknown>): void {
  const row = getInformationRequestRow(ctx, String(payload.informationRequestId));
  // A decision forced through the control plane may have completed the request already.
  if (!row || row.status !== 'PROCESSING_SUBMISSION') return;
  move(ctx, row, 'PENDING_REVIEW', { decision: 'PENDING' });
  scheduleJob(ctx, REVIEW_JOB, ctx.clock.nowMs() + ctx.fixtures.timeline.reviewMs, { informationRequestId: row.id });
}

/**
 * The automatic review outcome (docs/decisions.md#review-magic-names): REJECTED when the legal or business name
 * contains REJECT.
 */
export function automaticDecision(ctx: AppContext, row: InformationRequestRow): { decision: 'APPROVED' | 'REJECTED'; detail: string | null } {
  const name = subjectNameOf(ctx, row) ?? '';
  if (name.toUpperCase().includes(REJECT_WORD)) {
    return {
      decision: 'REJECTED',
      detail: `The review of information request ${row.id} rejected the enrollment: ${nameKeyOf(row.requirement_set)} "${name}" did not pass the review (sandbox rule: a name containing ${REJECT_WORD} is rejected)`,
    };
  }
  return { decision: 'APPROVED', detail: null };
}

/** Complete the review of a request in PROCESSING_SUBMISSION or PENDING_REVIEW (the caller checks which). */
export function completeReview(ctx: AppContext, row: InformationRequestRow, decision: 'APPROVED' | 'REJECTED'): InformationRequestRow {
  move(ctx, row, 'COMPLETED', { decision, decidedAt: ctx.clock.nowIso() });
  cancelJobs(ctx, SUBMISSION_PROCESSING_JOB, (payload) => payload.informationRequestId === row.id);
  cancelJobs(ctx, REVIEW_JOB, (payload) => payload.informationRequestId === row.id);
  return getInformationRequestRow(ctx, row.id)!;
}

/**
 * Control plane (docs/control-plane.md#information-requests): cancel a request that is not decided yet
 * (DRAFT, PROCESSING_SUBMISSION or PENDING_REVIEW; otherwise the transition table's 409). No review took
 * place, so the decision goes back to null; the jobs still due for it skip a request that moved on. The
 * enrollment keeps pointing at the request, so its summary shows CANCELED.
 */
export function cancelInformationRequest(ctx: AppContext, id: string): InformationRequestDetail {
  return ctx.db.transaction(() => cancelInformationRequestNow(ctx, id)).immediate();
}

function cancelInformationRequestNow(ctx: AppContext, id: string): InformationRequestDetail {
  const row = getInformationRequestRow(ctx, id);
  if (!row) throw errors.notFound(`Information request ${id} not found`);
  if (!informationRequestTransitions[row.status].includes('CANCELED')) {
    throw errors.conflict(
      `Information request ${row.id} is ${row.status}${row.decision ? ` (decision ${row.decision})` : ''}; only a request not yet decided (DRAFT, PROCESSING_SUBMISSION or PENDING_REVIEW) can be canceled`,
    );
  }
  move(ctx, row, 'CANCELED', { decision: null });
  cancelJobs(ctx, SUBMISSION_PROCESSING_JOB, (payload) => payload.informationRequestId === row.id);
  cancelJobs(ctx, REVIEW_JOB, (payload) => payload.informationRequestId === row.id);
  return toDetail(ctx, getInformationRequestRow(ctx, id)!);
}
