import { z } from 'zod';

// The list envelope of interface 2 and its page parameters. Bounds differ per endpoint (interface 8),
// so each list builds its own query schema from `pageQuery(max, default)`.

export function pageQuery(maxPageSize: number, defaultPageSize = 25) {
  return {
    pageIndex: z.coerce
      .number({ error: 'pageIndex must be an integer >= 0' })
      .int('pageIndex must be an integer >= 0')
      .min(0, 'pageIndex must be an integer >= 0')
      .max(1_000_000_000, 'pageIndex is too large')
      .default(0),
    pageSize: z.coerce
      .number({ error: `pageSize must be an integer 1-${maxPageSize}` })
      .int(`pageSize must be an integer 1-${maxPageSize}`)
      .min(1, `pageSize must be an integer 1-${maxPageSize}`)
      .max(maxPageSize, `pageSize must be an integer 1-${maxPageSize}`)
      .default(defaultPageSize),
  };
}

export function envelopeSchema<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    pageIndex: z.number().int(),
    pageSize: z.number().int(),
    totalRecords: z.number().int(),
  });
}

export interface Page<T> {
  data: T[];
  pageIndex: number;
  pageSize: number;
  totalRecords: number;
}
