// The readable name of every documented operation (docs/openapi.md#operation-ids). Generated clients name
// their methods after `operationId`, so each is chosen once and never changes; a route without an entry
// here fails the OpenAPI test. `description` is used only where the route's schema has none.

export interface OperationDoc {
  operationId: string;
  description?: string;
  /** The body may be left out entirely (the route's zod body accepts undefined). */
  optionalBody?: boolean;
}

export const OPERATIONS: Record<string, OperationDoc> = {
  // Auth and users
  'POST /v1/auth/token': {
    operationId: 'createAccessToken',
    optionalBody: true,
  },
  'POST /v1/auth/users': { operationId: 'createUser' },
  'GET /v1/users': { operationId: 'listUsers' },
  // Accounts and statements
  'GET /v1/accounts': { operationId: 'listAccounts' },
  'GET /v1/accounts/{accountId}': {
    operationId: 'getAccount',
    description: 'The account of the list (interface 2.1) with its deposit instructions (2.2) and balances. 404 for an id of another user or programme.',
  },
  'POST /v1/accounts/{accountId}/deposit-instructions': { operationId: 'createDepositInstruction' },
  'GET /v1/accounts/{accountId}/statement': { operationId: 'getAccountStatement' },
  'GET /v1/statement-files/{fileId}': { operationId: 'downloadStatementFile' },
  // Transactions, deposits, beneficiaries, intents, payouts
  'GET /v1/transactions': { operationId: 'listTransactions' },
  'GET /v1/transactions/{transactionId}': { operationId: 'getTransaction' },
  'POST /v1/sandbox/accounts/{accountId}/deposits': { operationId: 'simulateDeposit' },
  'POST /v1/beneficiaries': { operationId: 'createBeneficiary' },
  'GET /v1/beneficiaries': { operationId: 'listBeneficiaries' },
  'GET /v1/beneficiaries/{beneficiaryId}': {
    operationId: 'getBeneficiary',
    description: 'A beneficiary of the caller (interface 2.12) with its instruments. 404 for an id of another user or programme.',
  },
  'GET /v1/beneficiaries/{beneficiaryId}/instruments': {
    operationId: 'listBeneficiaryInstruments',
    description: 'The instruments of one of the caller\'s beneficiaries as { instruments: [...] } (interface 4.15), in the order they were given.',
  },
  'POST /v1/transaction-intents': { operationId: 'createTransactionIntent' },
  'GET /v1/transaction-intents': { operationId: 'listTransactionIntents' },
  'GET /v1/transaction-intents/{transactionIntentId}': {
    operationId: 'getTransactionIntent',
    description: 'A transaction intent of the caller (interface 2.3). An intent past its expiresAt reads EXPIRED.',
  },
  'POST /v1/transaction-intents/{transactionIntentId}/cancel': { operationId: 'cancelTransactionIntent' },
  'POST /v1/transaction-intents/{transactionIntentId}/commit': { operationId: 'commitTransactionIntent' },
  'POST /v1/payout-origination/{format}': { operationId: 'submitPayout' },
  // Enrollment and information requests
  'GET /v1/enrollment': { operationId: 'getEnrollment' },
  'POST /v1/enrollment/activate': { operationId: 'activateEnrollment' },
  'GET /v1/information-requests': { operationId: 'listInformationRequests' },
  'GET /v1/information-requests/{informationRequestId}': {
    operationId: 'getInformationRequest',
    description: 'An information request of the caller (interface 2.9) with its requirements and the entries written so far.',
  },
  'POST /v1/information-requests/{informationRequestId}/entries': { operationId: 'writeInformationRequestEntries' },
  'POST /v1/information-requests/{informationRequestId}/submit': { operationId: 'submitInformationRequest' },
  // Control plane
  'GET /_emulator/health': {
    operationId: 'emulatorHealth',
    description: 'Answers 200 while the server runs; open even when the server runs with an admin token, for health checks.',
  },
  'POST /_emulator/reset': {
    operationId: 'emulatorReset',
    description: 'Every table is cleared and the fixtures loaded again in one transaction; the clock goes back to its start (docs/control-plane.md).',
  },
  'GET /_emulator/clock': {
    operationId: 'emulatorGetClock',
    description: 'The emulated time, whether it runs with the real clock or is frozen, and its offset from the real clock.',
  },
  'POST /_emulator/clock': { operationId: 'emulatorSetClock' },
  'GET /_emulator/requests': {
    operationId: 'emulatorListRequests',
    description: 'The request journal: the last requests with their answers, oldest first; signatures, secrets and tokens are redacted.',
  },
  'DELETE /_emulator/requests': {
    operationId: 'emulatorClearRequests',
    description: 'Empties the request journal.',
  },
  'GET /_emulator/webhooks/deliveries': { operationId: 'emulatorListWebhookDeliveries' },
  'GET /_emulator/webhooks/deliveries/{id}': {
    operationId: 'emulatorGetWebhookDelivery',
    description: 'One webhook delivery with every attempt made (status, timing, error), as in the delivery log.',
  },
  'POST /_emulator/webhooks/deliveries/{id}/replay': { operationId: 'emulatorReplayWebhookDelivery' },
  'GET /_emulator/webhooks/endpoint': {
    operationId: 'emulatorGetWebhookEndpoints',
    description: 'The webhook URL configured for each programme (null when none) and the webhook API key sent with its deliveries.',
  },
  'PUT /_emulator/webhooks/endpoint': { operationId: 'emulatorSetWebhookEndpoint' },
  'POST /_emulator/webhooks/trigger': { operationId: 'emulatorTriggerWebhook' },
  'PUT /_emulator/webhooks/chaos': { operationId: 'emulatorSetWebhookChaos' },
  'GET /_emulator/webhooks/chaos': { operationId: 'emulatorGetWebhookChaos' },
  'DELETE /_emulator/webhooks/chaos': { operationId: 'emulatorClearWebhookChaos' },
  'POST /_emulator/webhooks/check': { operationId: 'emulatorCheckWebhookReceiver', optionalBody: true },
  'GET /_emulator/overview': { operationId: 'emulatorOverview' },
  'GET /_emulator/transactions': { operationId: 'emulatorListTransactions' },
  'GET /_emulator/transactions/{transactionId}': {
    operationId: 'emulatorGetTransaction',
    description: 'A transaction of any programme, with the user and programme that own it.',
  },
  'POST /_emulator/transactions/{transactionId}/status': { operationId: 'emulatorForceTransactionStatus' },
  'GET /_emulator/jobs': { operationId: 'emulatorListJobs' },
  'POST /_emulator/transactions/{transactionId}/return': { operationId: 'emulatorReturnTransaction' },
  'POST /_emulator/accounts/{accountId}/transactions': { operationId: 'emulatorInjectTransaction' },
  'POST /_emulator/accounts/{accountId}/provider-ready': { operationId: 'emulatorSetProviderReady' },
  'POST /_emulator/act-as': { operationId: 'emulatorActAs' },
  'POST /_emulator/snapshots': { operationId: 'emulatorSaveSnapshot' },
  'GET /_emulator/snapshots': {
    operationId: 'emulatorListSnapshots',
    description: 'Every saved snapshot: its name, emulated clock and clock mode, schema version, when it was saved, and its table and row counts (docs/control-plane.md#snapshots).',
  },
  'GET /_emulator/snapshots/{name}': {
    operationId: 'emulatorGetSnapshot',
    description: 'One saved snapshot, described as in the list. 404 for an unknown name.',
  },
  'DELETE /_emulator/snapshots/{name}': {
    operationId: 'emulatorDeleteSnapshot',
    description: 'Removes a saved snapshot; the current state is not touched. 404 for an unknown name.',
  },
  'PUT /_emulator/snapshots/{name}': { operationId: 'emulatorUploadSnapshot' },
  'POST /_emulator/snapshots/{name}/restore': { operationId: 'emulatorRestoreSnapshot' },
  'GET /_emulator/snapshots/{name}/export': { operationId: 'emulatorExportSnapshot' },
  'POST /_emulator/sessions': { operationId: 'emulatorCreateSession' },
  'GET /_emulator/sessions': {
    operationId: 'emulatorListSessions',
    description:
      'Every live session, oldest first, with its base URL, credentials and when it expires if left idle; the limit and idle timeout of this server (docs/sessions.md). ' +
      'With label, only the sessions created with that label.',
  },
  'DELETE /_emulator/sessions': { operationId: 'emulatorEndLabelledSessions' },
  'GET /_emulator/sessions/{id}': {
    operationId: 'emulatorGetSession',
    description: 'One live session, described as in the list. 404 once it has ended or expired.',
  },
  'DELETE /_emulator/sessions/{id}': { operationId: 'emulatorEndSession' },
  'POST /_emulator/faults': { operationId: 'emulatorAddFaultRule' },
  'GET /_emulator/faults': { operationId: 'emulatorListFaultRules' },
  'DELETE /_emulator/faults': { operationId: 'emulatorClearFaultRules' },
  'GET /_emulator/faults/{id}': { operationId: 'emulatorGetFaultRule' },
  'DELETE /_emulator/faults/{id}': { operationId: 'emulatorDeleteFaultRule' },
  'GET /_emulator/ui': {
    operationId: 'emulatorDashboard',
    description: 'The dashboard page (HTML): state, live transactions, webhook deliveries, the request journal and actions (docs/dashboard.md).',
  },
  'GET /_emulator/ui/state': { operationId: 'emulatorDashboardState' },
  'GET /_emulator/ui/events': { operationId: 'emulatorDashboardEvents' },
  'GET /_emulator/transactions/{transactionId}/story': { operationId: 'emulatorTransactionStory' },
  'GET /_emulator/accounts/{accountId}/balance-history': { operationId: 'emulatorBalanceHistory' },
  'GET /_emulator/users/{userId}/journey': { operationId: 'emulatorUserJourney' },
  'GET /_emulator/demo': { operationId: 'emulatorDemo' },
  'POST /_emulator/demo/steps/{number}': { operationId: 'emulatorRunDemoStep' },
  'POST /_emulator/information-requests/{informationRequestId}/decision': { operationId: 'emulatorDecideInformationRequest' },
  'POST /_emulator/information-requests/{informationRequestId}/cancel': { operationId: 'emulatorCancelInformationRequest' },
  'POST /_emulator/enrollment/{userId}/revoke': { operationId: 'emulatorRevokeEnrollment' },
};

/** One tag per area, in the order readers meet them. */
export const TAGS: Array<{ name: string; description: string }> = [
  { name: 'Auth', description: 'Access tokens and programme users (interface 5.1; docs/authentication.md)' },
  { name: 'Users', description: 'Users of the programme (interface 4.11)' },
  { name: 'Enrollment', description: 'Enrollment of a user (interface 4.9, 4.10; docs/onboarding.md)' },
  { name: 'Information requests', description: 'Information requests and their entries (interface 4.7, 4.8; docs/onboarding.md)' },
  { name: 'Accounts', description: 'Accounts, balances and deposit instructions (interface 4.1, 4.2; docs/money-in.md)' },
  { name: 'Statements', description: 'Account statements as JSON, CSV or PDF (interface 4.3; docs/statements.md)' },
  { name: 'Sandbox', description: 'Simulated deposits (interface 4.13; docs/money-in.md)' },
  { name: 'Transactions', description: 'Transactions of a user or a programme (interface 4.5, 4.6)' },
  { name: 'Beneficiaries', description: 'Beneficiaries and their instruments (interface 4.14, 4.15; docs/money-out.md)' },
  { name: 'Transaction intents', description: 'Priced previews of a transfer, then committed (interface 4.4; docs/money-out.md)' },
  { name: 'Payouts', description: 'Payout submission as JSON or ISO 20022 pacs.008 (interface 4.12; docs/payouts.md)' },
  { name: 'Webhooks', description: 'The transaction webhook the emulator sends to your URL (interface 6.1; docs/webhooks.md)' },
  { name: 'Emulator', description: 'The /_emulator control plane: clock, reset, forced outcomes, dashboard (docs/control-plane.md)' },
  { name: 'Emulator: webhooks', description: 'Webhook endpoint, delivery log, replay, trigger, chaos and the receiver check (docs/webhooks.md, docs/faults.md)' },
  { name: 'Emulator: snapshots', description: 'Save, restore, export and upload the whole state (docs/control-plane.md#snapshots)' },
  { name: 'Emulator: sessions', description: 'Isolated sandboxes under /_sessions/{id} on the same port, one per test (docs/sessions.md)' },
  { name: 'Emulator: faults', description: 'Fault rules on API requests, webhook chaos and the receiver check (docs/faults.md)' },
];
