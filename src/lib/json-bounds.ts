// The bounds of every JSON document a client sends (docs/robustness.md#json-bounds), measured on the text before it
// is parsed, in one pass and without recursion:
// - nesting: a body 10,000 levels deep parses, but every recursive walk over it afterwards (JSON.stringify, zod, deep
//   equality) overflows the stack;
// - entries: JSON.parse runs in one turn of the event loop, and 20 MiB of distinct keys took it 6.8 s on this project's
//   2-core machine (docs/robustness.md#json-bounds has the figures).

/** The most levels of objects and arrays a JSON document may nest: `{}` is one level, `{"a":[]}` two. */
export const MAX_JSON_DEPTH = 64;

/** The most entries (object members plus array elements, at every level) a JSON document may hold. */
export const MAX_JSON_ENTRIES = 50_000;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const COMMA = 0x2c; // ,

/**
 * Which bound JSON text passes first, if any. Brackets and commas inside strings do not count. Text that is not JSON
 * is measured all the same (its parse fails afterwards with its own message).
 */
export function jsonBoundPassed(text: string, maxDepth: number = MAX_JSON_DEPTH, maxEntries: number = MAX_JSON_ENTRIES): 'depth' | 'entries' | undefined {
  let depth = 0;
  let entries = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === COMMA) {
      // each comma starts one more entry of the container it is in
      if (++entries > maxEntries) return 'entries';
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (++depth > maxDepth) return 'depth';
      // a container's first entry, unless it closes at once
      if (!closesNext(text, index + 1) && ++entries > maxEntries) return 'entries';
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth--;
    }
  }
  return undefined;
}

/** Whether the next character after JSON whitespace from `index` closes a container. */
function closesNext(text: string, index: number): boolean {
  let code = text.charCodeAt(index);
  while (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) code = text.charCodeAt(++index);
  return code === CLOSE_OBJECT || code === CLOSE_ARRAY;
}

/** Whether JSON text nests objects and arrays deeper than `max` levels. */
export function jsonNestsDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  return jsonBoundPassed(text, max, Number.POSITIVE_INFINITY) === 'depth';
}

/** The sentence a refusal of a document past a bound uses; `what` names it ("The body"). */
export function jsonBoundMessage(what: string, bound: 'depth' | 'entries'): string {
  return bound === 'depth'
    ? `${what} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep; at most ${MAX_JSON_DEPTH} are accepted`
    : `${what} holds more than ${MAX_JSON_ENTRIES.toLocaleString('en-US')} entries (object members and array elements); at most ${MAX_JSON_ENTRIES.toLocaleString('en-US')} are accepted`;
}
