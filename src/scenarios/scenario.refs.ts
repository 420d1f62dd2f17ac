// References inside a scenario's strings (docs/decisions.md#scenario-references): `${name}`, `${name.dotted.path}` and
// `${steps.<id>.status | body... | headers...}`. A string that is one whole reference keeps the value's type; a
// reference inside a longer string is interpolated as text. The loader checks every one before a request is sent
// (scenario.load.ts); the engine resolves them against the run's names (scenario.run.ts).

export const REFERENCE = /\$\{([^{}]*)\}/g;
const WHOLE = /^\$\{([^{}]*)\}$/;
const EXPRESSION = /^([a-zA-Z][a-zA-Z0-9_]{0,63})((?:\.[^.\s{}]+)*)$/;

export interface ParsedReference {
  /** The given name or capture, or `steps`. */
  root: string;
  /** The dotted path after the root (for `steps`: the step id first). */
  path: string[];
}

/** The references in a string, in order; an expression that does not parse is returned with `root` ''. */
export function referencesIn(text: string): Array<{ expression: string; parsed: ParsedReference | null }> {
  const found: Array<{ expression: string; parsed: ParsedReference | null }> = [];
  for (const match of text.matchAll(REFERENCE)) found.push({ expression: match[1]!, parsed: parseReference(match[1]!) });
  return found;
}

export function parseReference(expression: string): ParsedReference | null {
  const match = EXPRESSION.exec(expression.trim());
  if (!match) return null;
  const path = match[2] ? match[2].slice(1).split('.') : [];
  return { root: match[1]!, path };
}

/** Whether a string is a single whole reference (its value keeps its type). */
export function wholeReference(text: string): string | null {
  const match = WHOLE.exec(text);
  return match ? match[1]! : null;
}

/** Read a dotted path into a JSON value: object keys, array indexes, and `length` of an array or string. */
export function readPath(value: unknown, path: readonly string[]): { found: boolean; value: unknown } {
  let current: unknown = value;
  for (const segment of path) {
    if (Array.isArray(current)) {
      if (segment === 'length') {
        current = current.length;
        continue;
      }
      if (!/^\d+$/.test(segment) || Number(segment) >= current.length) return { found: false, value: undefined };
      current = current[Number(segment)];
    } else if (typeof current === 'string' && segment === 'length') {
      current = current.length;
    } else if (current !== null && typeof current === 'object' && Object.prototype.hasOwnProperty.call(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return { found: false, value: undefined };
    }
  }
  return { found: true, value: current };
}
