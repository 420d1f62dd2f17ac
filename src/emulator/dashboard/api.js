// Talking to the server: one fetch wrapper for the control plane, the admin token it sends, and act-as for
// the public API. The page holds no API key or secret: actions on /v1/ paths go through
// POST /_emulator/act-as, which signs them server-side for the chosen user
// (docs/dashboard.md#how-actions-reach-the-public-api-post-_emulatoract-as).

import { $ } from './dom.js';

const REQUEST_TIMEOUT_MS = 30_000;
const TOKEN_KEY = 'service-sandbox-admin-token';

// The page may belong to a session (/_sessions/{id}/_emulator/ui): every call goes to the same sandbox as the page
// (docs/sessions.md#the-dashboard). ROOT is the server's root sandbox, where sessions are listed.
export const BASE = location.pathname.replace(/\/_emulator\/ui\/?$/, '');
export const ROOT = BASE.replace(/\/_sessions\/[^/]+$/, '');

// Kept in the tab's session storage only (docs/dashboard.md#read-endpoints-behind-the-dashboard).
let adminToken = sessionStorage.getItem(TOKEN_KEY);

/** A request to this server; resolves with { status, ok, body } whatever the status (JSON parsed when it is JSON). */
export async function call(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (adminToken) headers['x-admin-token'] = adminToken;
  const response = await fetch(path.startsWith('/_emulator/sessions') ? ROOT + path : BASE + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (response.status === 401 && path.startsWith('/_emulator')) showTokenForm();
  return { status: response.status, ok: response.ok, body: parsed };
}

/** Call the public API as a user; the outcome has the status and body of the inner call. */
export async function actAs(userId, method, path, body) {
  const outer = await call('POST', '/_emulator/act-as', body === undefined ? { userId, method, path } : { userId, method, path, body });
  if (!outer.ok) return outer;
  return { status: outer.body.status, ok: outer.body.status < 400, body: outer.body.body };
}

function showTokenForm() {
  $('#admin-token').hidden = false;
}

/** The admin token form, shown after a 401; `onSaved` runs once a token is entered. */
export function initAdminToken(onSaved) {
  $('#admin-token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    adminToken = $('#admin-token-input').value;
    sessionStorage.setItem(TOKEN_KEY, adminToken);
    $('#admin-token').hidden = true;
    onSaved();
  });
}
