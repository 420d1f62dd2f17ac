// Public API of the package: build or start the emulator in-process, and sign requests like a client.
export { buildApp } from './app.js';
export { startServer, type RunningServer } from './server.js';
export { createContext, type ContextOptions } from './create-context.js';
export { signRequest, canonicalRequest } from './lib/hmac.js';
export type { AppContext } from './context.js';
export {
  verifyWebhookSignature,
  checkWebhookSignature,
  signWebhook,
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  type VerifyWebhookInput,
  type SignWebhookInput,
  type WebhookVerificationResult,
} from './webhook-verify.js';
export {
  startWebhookDispatcher,
  webhookDispatcherOf,
  type WebhookDispatcher,
  type WebhookDispatcherOptions,
} from './domains/webhooks/webhooks.dispatcher.js';
export { startSandbox, type Sandbox, type SandboxOptions } from './testkit/start-sandbox.js';
export { startSession, type SessionSandbox, type SessionSandboxOptions } from './testkit/start-session.js';
export type { ReceivedWebhook, SandboxClient, SandboxCredentials } from './testkit/kit-parts.js';
export type { FaultRule, FaultRuleInput } from './faults/fault-rules.schema.js';
export type { WebhookChaos, WebhookChaosInput } from './faults/webhook-chaos.schema.js';
