// One nesting limit for every JSON document a client sends (docs/robustness.md#nesting-limit): a body 10,000
// levels deep parses, but every recursive walk over it afterwards (JSON.stringify, zod, deep equality) overflows
// the stack. The text is measured before it is parsed, in one pass and without recursion.

/** The most levels of objects and arrays a JSON document may nest: `{}` is one level, `{"a":[]}` two. */
export const MAX_JSON_DEPTH = 64;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Whether JSON text nests objects and arrays deeper than `max` levels. Brackets inside strings do not count.
 * Text that is not JSON is measured all the same (its parse fails afterwards with its own message).
 */
export function jsonNestsDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/** The sentence every refusal of a too-deep document uses. */
export function tooDeepMessage(what: string): string {
  return `${what} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep; at most ${MAX_JSON_DEPTH} are accepted`;
}
