import type { JobHandler } from './scheduler.js';
import { RAIL_STEP_JOB, runRailStep } from '../domains/transactions/transactions.service.js';
import { WEBHOOK_RETRY_JOB, runWebhookRetry } from '../domains/webhooks/webhooks.service.js';
import { REVIEW_JOB, SUBMISSION_PROCESSING_JOB, advanceToReview } from '../domains/information-requests/information-requests.service.js';
import { runEnrollmentReview } from '../domains/enrollment/enrollment.service.js';
import { PROVISION_DEPOSIT_INSTRUCTION_JOB, provisionDepositInstruction } from '../domains/deposit-instructions/deposit-instructions.service.js';
import { INTENT_EXPIRY_JOB, runIntentExpiry } from '../domains/intents/intents.service.js';
import { PROVIDER_READY_JOB, runProviderReady } from '../domains/accounts/account-templates.js';

// Every job type and its handler; a domain adds its own line here.
export const jobHandlers: Record<string, JobHandler> = {
  [RAIL_STEP_JOB]: runRailStep,
  [WEBHOOK_RETRY_JOB]: runWebhookRetry,
  [SUBMISSION_PROCESSING_JOB]: advanceToReview,
  [REVIEW_JOB]: runEnrollmentReview,
  [PROVISION_DEPOSIT_INSTRUCTION_JOB]: provisionDepositInstruction,
  [INTENT_EXPIRY_JOB]: runIntentExpiry,
  [PROVIDER_READY_JOB]: runProviderReady,
};
