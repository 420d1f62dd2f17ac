import { z } from 'zod';

// The list envelope of interface 2 and its page parameters. Bounds differ per endpoint (interface 8),
// so each list builds its own query schema from `pageQuery(max, default)`.

/**
 * An integer query parameter written as plain decimal digits. `z.coerce.number()` alone would also take
 * `0x10`, `1e2`, ` 5` or `+5`; a mistake in a query must be a 400, never a silent reinterpretation.
 */
export function queryInteger(min: number, max: number, message: string, defaultValue?: number, description?: string) {
  const digits = z.string().regex(/^\d{1,12}$/, message);
  const parsed = (defaultValue === undefined ? digits : digits.default(String(defaultValue)))
    .transform(Number)
    .pipe(z.number().int(message).min(min, message).max(max, message))
    // The document shows the integer it stands for, so a generated client sends `pageSize: 25`
    // (the string pattern and default are turned into numbers by http/openapi-document.ts).
    .meta({ type: 'integer', minimum: min, maximum: max, ...(description ? { description } : {}) });
  return parsed;
}

export function pageQuery(maxPageSize: number, defaultPageSize = 25) {
  return {
    pageIndex: queryInteger(0, 1_000_000_000, 'pageIndex must be an integer >= 0 (at most 1000000000), written as digits', 0, 'The page to return, counted from 0'),
    pageSize: queryInteger(1, maxPageSize, `pageSize must be an integer 1-${maxPageSize}, written as digits`, defaultPageSize, `Items per page, 1-${maxPageSize}`),
  };
}

export function envelopeSchema<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    pageIndex: z.number().int().min(0),
    pageSize: z.number().int().min(1),
    totalRecords: z.number().int().min(0),
  });
}
