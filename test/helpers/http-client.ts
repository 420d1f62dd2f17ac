import { signRequest } from '../../src/lib/hmac.js';
import { CREDENTIALS } from '../helper.js';

// Real HTTP calls to a running server or session (docs/sessions.md#addresses-and-signing): JSON in and out, and
// requests signed with the SINGLE_USER key over the path as sent, session prefix included.

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export async function call(url: string, method = 'GET', body?: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: the text as it came
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/**
 * `path` under `baseUrl`, signed over the target as sent (or `signedTarget`, to send a wrong one on purpose), with
 * the fixtures' SINGLE_USER key, or the MULTI_USER key acting for `user`.
 */
export async function signed(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  options: { signedTarget?: string; user?: string } = {},
): Promise<HttpAnswer> {
  const url = new URL(baseUrl + path);
  const payload = body === undefined ? '' : JSON.stringify(body);
  const timestamp = String(Date.now());
  const key = options.user ? CREDENTIALS.multi : CREDENTIALS.single;
  const headers: Record<string, string> = {
    'x-service-api-key': key.apiKey,
    'x-service-timestamp': timestamp,
    'x-service-program-id': CREDENTIALS.programmeId,
    'x-service-signature': signRequest({ apiKey: key.apiKey, secret: key.secret, timestamp, method, target: options.signedTarget ?? url.pathname + url.search, body: payload }),
  };
  if (options.user) headers['x-service-user-id'] = options.user;
  return call(url.toString(), method, body, headers);
}
