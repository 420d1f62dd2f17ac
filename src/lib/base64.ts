// Base64 as clients send it (docs/payouts.md, docs/onboarding.md#requirements-and-value-formats): the standard alphabet with `=` padding to a
// multiple of 4, where ASCII spaces, tabs and line breaks are ignored so wrapped `base64` output works as it is. Any
// other character, a no-break space included, makes the text not Base64.

const ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/;
const IGNORED = /[ \t\r\n]+/g;

/** The text without the whitespace Base64 may be wrapped with. */
export function compactBase64(text: string): string {
  return text.replace(IGNORED, '');
}

/** Whether compacted text is standard padded Base64 (the empty text is, with nothing in it). */
export function isPaddedBase64(compact: string): boolean {
  return compact.length % 4 === 0 && ALPHABET.test(compact);
}

/** The byte length compacted, padded Base64 decodes to. */
export function decodedBase64Length(compact: string): number {
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return Math.floor((compact.length * 3) / 4) - padding;
}
