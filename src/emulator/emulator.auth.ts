import { ADMIN_POLICY, OPEN_POLICY } from '../http/auth.js';

// The control plane (docs/control-plane.md). Its routes take the admin policy (no credentials unless ADMIN_TOKEN is
// set, http/auth.ts); OPEN is for the few that stay open even then (health, the dashboard's page and files).
export const CONTROL_PLANE = { auth: ADMIN_POLICY };
export const OPEN = { auth: OPEN_POLICY };
