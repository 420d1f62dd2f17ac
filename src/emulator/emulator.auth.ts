import { ADMIN_POLICY, OPEN_POLICY } from '../http/auth.js';
import { CHANGES_STATE } from '../http/web-page-guard.js';

// The control plane (docs/control-plane.md). Its routes take the admin policy (no credentials unless ADMIN_TOKEN is
// set, http/auth.ts); OPEN is for the few that stay open even then (health, the dashboard's page and files).
export const CONTROL_PLANE = { auth: ADMIN_POLICY };
/**
 * A control-plane GET that changes state (docs/robustness.md#web-pages): the listen relay re-points every webhook
 * endpoint, a dashboard stream holds one of a sandbox's places. No page of another origin may send it, a link included.
 */
export const CONTROL_PLANE_CHANGING_GET = { ...CONTROL_PLANE, ...CHANGES_STATE };
export const OPEN = { auth: OPEN_POLICY };
