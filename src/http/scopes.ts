// The scopes of bearer tokens (docs/decisions.md#bearer-tokens) and the entitlements of API keys
// (docs/authentication.md#entitlements). Their own module so that the fixtures schema can name them without importing
// the auth hook.
export const SCOPES = [
  'accounts:read',
  'accounts:write',
  'transactions:read',
  'transactions:write',
  'enrollment:read',
  'enrollment:write',
  'beneficiaries:read',
  'beneficiaries:write',
  'statements:read',
] as const;
export type Scope = (typeof SCOPES)[number];
