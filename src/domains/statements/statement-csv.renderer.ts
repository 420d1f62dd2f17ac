import { once } from 'node:events';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { stringify } from 'csv-stringify';
import type { Statement } from './statements.schema.js';

// The CSV form of a statement (docs/statements.md#csv): a header row, then one row per entry, chronological. RFC 4180:
// CRLF between records; a field with a comma, quote, CR or LF is quoted and inner quotes doubled, so
// descriptions survive a round trip. Values are written as they are (no spreadsheet formula escaping),
// so the file parses back to exactly the JSON statement's entries.

export const CSV_COLUMNS = [
  'date',
  'occurredAt',
  'reference',
  'description',
  'direction',
  'amount',
  'currency',
  'balanceBefore',
  'balanceAfter',
  'isFee',
  'statusAsOfPeriodEnd',
] as const;

const YIELD_EVERY_ROWS = 1000;

/** Rows are streamed through csv-stringify with backpressure; chunks are joined once at the end. */
export async function renderStatementCsv(statement: Statement): Promise<Buffer> {
  const stringifier = stringify({
    header: true,
    columns: [...CSV_COLUMNS],
    record_delimiter: 'windows',
    // csv-stringify quotes LF by itself but not a lone CR; quote any line break.
    quoted_match: /[\r\n]/,
    cast: { boolean: (value) => (value ? 'true' : 'false') },
  });
  const chunks: Buffer[] = [];
  stringifier.on('data', (chunk: Buffer | string) => chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk));
  const finished = once(stringifier, 'end');

  let written = 0;
  for (const day of statement.days) {
    for (const entry of day.entries) {
      const accepted = stringifier.write([
        day.date,
        entry.occurredAt,
        entry.reference,
        entry.description,
        entry.direction,
        entry.amount,
        statement.currency,
        entry.balanceBefore,
        entry.balanceAfter,
        entry.isFee,
        entry.statusAsOfPeriodEnd,
      ]);
      if (!accepted) await once(stringifier, 'drain');
      written += 1;
      if (written % YIELD_EVERY_ROWS === 0) await yieldToEventLoop();
    }
  }
  stringifier.end();
  await finished;
  return Buffer.concat(chunks);
}
