import { createHmac } from 'node:crypto';

// Ids are opaque, type-prefixed and deterministic (docs/decisions.md#id-prefixes, docs/decisions.md#determinism): the
// n-th value drawn from a seed is always the same. The counter lives in the database (see db/id-counter.ts) so a file
// database restarted later never hands out an id twice, and a rolled-back request does not consume one.

export const ID_PREFIXES = {
  programme: 'prg',
  user: 'usr',
  account: 'acct',
  depositInstruction: 'di',
  transaction: 'txn',
  intent: 'ti',
  beneficiary: 'ben',
  counterparty: 'cp',
  beneficiaryInstrument: 'bi',
  enrollment: 'enr',
  informationRequest: 'ir',
  event: 'evt',
  delivery: 'dlv',
  job: 'job',
  ledgerEntry: 'le',
  statementFile: 'sf',
  payoutMessage: 'msg',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export interface CounterStore {
  /** Returns the next value of the persistent counter (1, 2, 3 ...). */
  next(): number;
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Buffer, length: number): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length >= length) break;
  }
  return out;
}

export interface IdSource {
  /** A prefixed id, e.g. `txn_4f0c2m9r7e1k8q3a`. */
  id(kind: IdKind): string;
  /** `count` deterministic decimal digits (references, account numbers). */
  digits(count: number): string;
  /** `count` deterministic lowercase hex characters (addresses, chain hashes). */
  hex(count: number): string;
  /** A deterministic upper-case reference such as `SBX2K7Q9M4TX`. */
  reference(prefix?: string): string;
}

export function createIdSource(seed: string, counter: CounterStore): IdSource {
  function draw(label: string): Buffer {
    return createHmac('sha256', seed).update(`${label}:${counter.next()}`).digest();
  }
  function drawMany(label: string, bytes: number): Buffer {
    const parts: Buffer[] = [];
    let total = 0;
    while (total < bytes) {
      const part = draw(label);
      parts.push(part);
      total += part.length;
    }
    return Buffer.concat(parts).subarray(0, bytes);
  }
  return {
    id(kind) {
      const prefix = ID_PREFIXES[kind];
      return `${prefix}_${base32(draw(prefix), 16)}`;
    },
    digits(count) {
      const bytes = drawMany('digits', count);
      let out = '';
      for (let i = 0; i < count; i += 1) out += String(bytes[i]! % 10);
      return out;
    },
    hex(count) {
      return drawMany('hex', Math.ceil(count / 2)).toString('hex').slice(0, count);
    },
    reference(prefix = 'SBX') {
      return `${prefix}${base32(draw('reference'), 10).toUpperCase()}`;
    },
  };
}
