// The WHERE clause of a list: each term is a condition with one `?` and its value, kept only when the value is given
// (`undefined`: the filter was not asked for). The text names only the filters given, so each combination is its own
// prepared statement, planned with the indexes of the columns it names.

/** A condition with one `?`, and the value bound to it; left out when the value is undefined. */
export type FilterTerm = readonly [condition: string, value: string | number | undefined];

export interface SqlFilter {
  /** The kept conditions joined with AND; '' when none is kept. */
  sql: string;
  /** Their values, in order. */
  params: Array<string | number>;
}

/** The terms whose value is given, ANDed, in the order listed. */
export function sqlFilter(terms: readonly FilterTerm[]): SqlFilter {
  const conditions: string[] = [];
  const params: Array<string | number> = [];
  for (const [condition, value] of terms) {
    if (value === undefined) continue;
    conditions.push(condition);
    params.push(value);
  }
  return { sql: conditions.join(' AND '), params };
}

/** `WHERE <conditions>`, or '' when the filter keeps none. */
export function whereClause(filter: SqlFilter): string {
  return filter.sql === '' ? '' : `WHERE ${filter.sql}`;
}
