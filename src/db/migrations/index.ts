import { migration001Core } from './001-core.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Add new migrations here with the next number; never edit one that has shipped.
export const migrations: Migration[] = [migration001Core];
