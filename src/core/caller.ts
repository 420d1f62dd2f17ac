/**
 * Who a user-scoped call acts for: the programme and the user the request authenticated as. The auth layer
 * produces it (`userOf` in src/http/auth.ts, from the key or token and X-Service-User-Id:
 * docs/decisions.md#user-context); every domain function a user-scoped route calls takes it.
 * Core, so that http and the domains share one definition (docs/architecture.md#folder-map).
 */
export interface Caller {
  programmeId: string;
  userId: string;
}

/**
 * Who a `user-or-programme` read acts for: one user, or (userId null) the whole programme
 * (`scopeOf` in src/http/auth.ts; docs/money-in.md#programme-wide-transactions).
 */
export interface CallerScope {
  programmeId: string;
  userId: string | null;
}
