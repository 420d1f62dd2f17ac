import type { Scope } from '../http/scopes.js';

// What each /v1 route needs of the key that signs it (docs/authentication.md#entitlements), so that a scenario step
// whose key may not call its route is refused when the file is checked, before any request is sent
// (docs/decisions.md#scenario-keys). The routes declare the same thing in their `config.auth`;
// test/scenarios/scenario-scopes.test.ts compares this table with every /v1 route the app registers, so the two
// cannot drift apart.

export interface V1Route {
  method: string;
  /** Fastify's pattern: `:name` is one path segment. */
  url: string;
  /** The entitlement the key needs; null: none. */
  scope: Scope | null;
  /** Who the call acts for (src/http/auth.ts AuthPolicy.user). */
  user: 'required' | 'programme' | 'user-or-programme';
}

export const V1_ROUTES: readonly V1Route[] = [
  { method: 'POST', url: '/v1/auth/token', scope: null, user: 'required' },
  { method: 'GET', url: '/v1/users', scope: null, user: 'programme' },
  { method: 'POST', url: '/v1/auth/users', scope: 'enrollment:write', user: 'programme' },
  { method: 'GET', url: '/v1/accounts', scope: 'accounts:read', user: 'required' },
  { method: 'GET', url: '/v1/accounts/:accountId', scope: 'accounts:read', user: 'required' },
  { method: 'GET', url: '/v1/accounts/:accountId/statement', scope: 'statements:read', user: 'required' },
  { method: 'GET', url: '/v1/statement-files/:fileId', scope: null, user: 'programme' },
  { method: 'POST', url: '/v1/accounts/:accountId/deposit-instructions', scope: 'accounts:write', user: 'required' },
  { method: 'GET', url: '/v1/enrollment', scope: 'enrollment:read', user: 'required' },
  { method: 'POST', url: '/v1/enrollment/activate', scope: 'enrollment:write', user: 'required' },
  { method: 'GET', url: '/v1/information-requests', scope: 'enrollment:read', user: 'required' },
  { method: 'GET', url: '/v1/information-requests/:informationRequestId', scope: 'enrollment:read', user: 'required' },
  { method: 'POST', url: '/v1/information-requests/:informationRequestId/entries', scope: 'enrollment:write', user: 'required' },
  { method: 'POST', url: '/v1/information-requests/:informationRequestId/submit', scope: 'enrollment:write', user: 'required' },
  { method: 'POST', url: '/v1/sandbox/accounts/:accountId/deposits', scope: 'transactions:write', user: 'required' },
  { method: 'GET', url: '/v1/transactions', scope: 'transactions:read', user: 'user-or-programme' },
  { method: 'GET', url: '/v1/transactions/:transactionId', scope: 'transactions:read', user: 'user-or-programme' },
  { method: 'POST', url: '/v1/beneficiaries', scope: 'beneficiaries:write', user: 'required' },
  { method: 'GET', url: '/v1/beneficiaries', scope: 'beneficiaries:read', user: 'required' },
  { method: 'GET', url: '/v1/beneficiaries/:beneficiaryId', scope: 'beneficiaries:read', user: 'required' },
  { method: 'GET', url: '/v1/beneficiaries/:beneficiaryId/instruments', scope: 'beneficiaries:read', user: 'required' },
  { method: 'POST', url: '/v1/transaction-intents', scope: 'transactions:write', user: 'required' },
  { method: 'GET', url: '/v1/transaction-intents', scope: 'transactions:read', user: 'required' },
  { method: 'GET', url: '/v1/transaction-intents/:transactionIntentId', scope: 'transactions:read', user: 'required' },
  { method: 'POST', url: '/v1/transaction-intents/:transactionIntentId/cancel', scope: 'transactions:write', user: 'required' },
  { method: 'POST', url: '/v1/transaction-intents/:transactionIntentId/commit', scope: 'transactions:write', user: 'required' },
  { method: 'POST', url: '/v1/payout-origination/:format', scope: 'transactions:write', user: 'required' },
];

/** The route a step's method and path (references already replaced by a placeholder segment) would reach. */
export function v1RouteOf(method: string, path: string): V1Route | null {
  const pathname = (path.split('?')[0] ?? '').replace(/\/+$/, '');
  const segments = pathname.split('/');
  return (
    V1_ROUTES.find((route) => {
      if (route.method !== method) return false;
      const pattern = route.url.split('/');
      return pattern.length === segments.length && pattern.every((part, index) => part.startsWith(':') ? segments[index] !== '' : part === segments[index]);
    }) ?? null
  );
}
