// Secrets never appear in logs (docs/decisions.md#no-secrets-in-logs). Request lines are logged without headers or
// bodies; what is left is the url, whose query may carry a signed link's signature (docs/decisions.md#statement-links)
// or a token someone pasted into it. Their values are masked; the parameter names stay for debugging.

const SECRET_QUERY_PARAMS = /([?&](?:signature|sig|token|access_token|secret|api_key|apikey)=)[^&#]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY_PARAMS, '$1[REDACTED]');
}
