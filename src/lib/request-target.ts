// A request target the server builds from a client's text (act-as, a scenario's step) goes under a sandbox's path
// prefix and through a URL parser (app.inject's, fetch's) that resolves dot segments: `/_sessions/ses_1` +
// `/_emulator/../../../_emulator/clock` is the root's clock. Such a target must be one the parser leaves as it is
// (docs/scenarios.md#paths, docs/dashboard.md#how-actions-reach-the-public-api-post-_emulatoract-as).

// %2e, %2f and %5c: encoded dots, slashes and backslashes that a server or proxy decoding them would read as other segments
const ENCODED_SEPARATOR = /%2e|%2f|%5c/i;

/**
 * Why `target` (a path and an optional query string) is not normalized, in words for a message; null when it is: it
 * parses, has no fragment, no encoded dot, slash or backslash in its path, and a URL parser gives its path back unchanged
 * (no `.` or `..` segments, no backslashes, no characters the parser would encode).
 */
export function targetProblem(target: string): string | null {
  if (target.includes('#')) return 'it has a fragment (#)';
  const [pathname = ''] = target.split('?');
  if (ENCODED_SEPARATOR.test(pathname)) return 'it has an encoded dot, slash or backslash (%2e, %2f, %5c)';
  let parsed: URL;
  try {
    parsed = new URL(target, 'http://sandbox.invalid');
  } catch {
    return 'it is not a valid request target';
  }
  if (parsed.pathname !== pathname) return 'it has dot segments (. or ..), backslashes or characters the URL parser rewrites (URL-encode special characters)';
  return null;
}
