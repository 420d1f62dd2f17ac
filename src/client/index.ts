// `service-sandbox/client` (package.json "exports"): the typed client, the signing functions for clients of other
// generators, webhook verification and a verifying receiver for tests (docs/clients.md#typescript). An entry module
// that imports only lib/core and its own folder, never the server (docs/architecture.md#layers), so an app's tests
// can import it without the emulator's dependencies.
export { VERSION } from '../version.js';
export { VERSION_WARNING_CODE } from './version-check.js';
export { DEFAULT_TIMEOUT_MS, SandboxTimeoutError } from './timeout.js';
export {
  createSandboxClient,
  DEFAULT_SESSION_CLOCK,
  NotSettledError,
  SandboxApiError,
  type CallOptions,
  type SettleOptions,
  type SandboxApi,
  type SandboxClient,
  type SandboxClientOptions,
  type Schemas,
  type Session,
  type SettleReport,
  type Clock,
  type Snapshot,
  type FaultRule,
  type FaultRuleInput,
  type WebhookChaos,
  type WebhookChaosInput,
  type WebhookDeliveryList,
  type WebhookDeliveryQuery,
  type ListenStatus,
  type EndedSessions,
  type CreateSessionOptions,
  type PayoutJsonPayload,
  type PayoutResult,
  type ServiceError,
} from './client.js';
export {
  forwardWebhooks,
  WebhookForwardingError,
  type ForwardedAttempt,
  type ForwardedDelivery,
  type ForwardingEnd,
  type ForwardingErrorCode,
  type ForwardingReady,
  type ForwardResult,
  type ForwardWebhooksOptions,
  type WebhookForwarder,
} from './forward.js';
export {
  DEFAULT_MULTI_KEY,
  DEFAULT_SINGLE_KEY,
  isPayoutTarget,
  signedHeaders,
  signFetchRequest,
  signingFetch,
  signingMiddleware,
  type SignInput,
  type SigningKey,
  type SigningOptions,
} from './signing.js';
export {
  startWebhookReceiver,
  type RejectedDelivery,
  type WebhookEvent,
  type WebhookKey,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from './receiver.js';
export type { components, operations, paths } from './generated/openapi.js';
export {
  checkWebhookSignature,
  signWebhook,
  verifyWebhookSignature,
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  type VerifyWebhookInput,
  type WebhookVerificationResult,
} from '../webhook-verify.js';
