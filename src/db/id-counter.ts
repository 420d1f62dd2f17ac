import type { Db } from './connection.js';
import { prepared } from './connection.js';
import type { CounterStore } from '../lib/ids.js';

// The id counter lives in the database (lib/ids.ts explains why).
export function databaseCounter(db: Db): CounterStore {
  return {
    next() {
      const row = prepared<{ value: string }>(
        db,
        "INSERT INTO meta (key, value) VALUES ('id_counter', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 RETURNING value",
      ).get();
      return Number(row!.value);
    },
  };
}
