import { randomBytes } from 'node:crypto';

// Requests the control plane makes to the API in process (the guided demo, act-as) are not subject to the sandbox's
// fault rules (docs/faults.md#what-rules-never-touch): they carry a header with a token drawn once per process, which
// no outside client can know (the journal redacts it), and the fault hooks let such a request through untouched.

export const INTERNAL_CALL_HEADER = 'x-sandbox-internal-call';
const TOKEN = randomBytes(18).toString('base64url');

/** The header an in-process call to the API adds. */
export function internalCallHeaders(): Record<string, string> {
  return { [INTERNAL_CALL_HEADER]: TOKEN };
}

/** True for a request made by the control plane itself through `internalCallHeaders()`. */
export function isInternalCall(headers: Record<string, string | string[] | undefined>): boolean {
  return headers[INTERNAL_CALL_HEADER] === TOKEN;
}
