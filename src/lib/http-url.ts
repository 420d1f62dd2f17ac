// The one rule for a URL the server or a kit sends to or reads from (docs/webhooks.md#pointing-it-at-your-app): an
// http:// or https:// scheme, in any case (schemes are case-insensitive, RFC 3986 3.1), and a URL WHATWG's parser
// takes. A space or a quote in the path is taken (the parser percent-encodes it); one in the host is not.

/** Whether `value` is an http(s) URL by the project's one rule. */
export function isHttpUrl(value: string): boolean {
  return /^https?:\/\//i.test(value) && URL.canParse(value);
}
