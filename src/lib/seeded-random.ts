import { createHash } from 'node:crypto';

// Seeded draws for fault rules and webhook chaos (docs/faults.md#seeds): the same seed and the same order of
// matching requests or deliveries give the same faults on every run. sfc32, seeded from SHA-256 of the seed
// text: small, fast, and good enough for deciding "does this fault fire" (not for anything secret).

export interface SeededRandom {
  /** The seed text this generator was made from. */
  readonly seed: string;
  /** The next draw in [0, 1). */
  next(): number;
  /** True with probability `p` (1 always, 0 never; a draw is taken either way, so the sequence does not shift). */
  chance(p: number): boolean;
  /** An integer in [min, max], both included. */
  between(min: number, max: number): number;
}

export function seededRandom(seed: string): SeededRandom {
  const digest = createHash('sha256').update(seed).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  // warm up, as sfc32's authors advise, so nearby seeds do not start with related draws
  for (let i = 0; i < 12; i++) next();
  return {
    seed,
    next,
    chance: (p) => next() < p,
    between: (min, max) => min + Math.floor(next() * (max - min + 1)),
  };
}
