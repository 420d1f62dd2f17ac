import type { Config } from '../config.js';

// Everything one sandbox (the root or a session) holds in memory outside its database, in one object reached from
// `ctx.runtime` and created in one place, createContext (docs/architecture.md#runtime). Each piece is a slot that a
// module declares in its descriptor (`state`): how it starts, what reset does to it, whether snapshots carry it.
// Reset loops over the slots, so nothing a sandbox holds escapes a reset by being left out of a hand-kept list.

/**
 * What `POST /_emulator/reset` does to a slot: `keep` it as it is, `renew` it (a new value from `create`, as a new
 * sandbox has), or a function that empties it in place (for values others hold a reference to).
 */
export type ResetRule<T> = 'keep' | 'renew' | ((value: T) => void);

export interface StateSlot<T> {
  /** `<module>.<what>`, unique: the name in docs/architecture.md#runtime and in errors. */
  name: string;
  /** What a new sandbox starts with: the root at start-up and every session when it is created. */
  create(config: Config): T;
  reset: ResetRule<T>;
  /**
   * Snapshots carry the database and the clock only (docs/decisions.md#snapshots): saving or restoring one leaves
   * every slot as it is. A slot that should travel with a snapshot needs capture and restore written first.
   */
  carriedBySnapshots: false;
  /**
   * What a session starts with: `fresh` (what `create` makes), or `given` when the session's creator sets it
   * (the session's webhook URL, the snapshot it started from: docs/sessions.md#what-a-session-starts-from).
   */
  newSession: 'fresh' | 'given';
}

// The values are of many types; a slot's type parameter is what keeps each access typed.
type AnySlot = StateSlot<any>;

export class SandboxRuntime {
  private readonly values = new Map<AnySlot, unknown>();

  /** Every slot the sandbox's modules declare, each created now. */
  constructor(
    readonly slots: readonly AnySlot[],
    private readonly config: Config,
  ) {
    for (const slot of slots) {
      if (this.values.has(slot)) throw new Error(`runtime slot ${slot.name} is declared twice`);
      this.values.set(slot, slot.create(config));
    }
  }

  /** The slot's value. A slot no module declares is a programming error (docs/architecture.md#runtime). */
  get<T>(slot: StateSlot<T>): T {
    const value = this.values.get(slot);
    // one lookup on the hot path (every request asks for the fault rules); a second only for an undefined value
    if (value === undefined && !this.values.has(slot)) {
      throw new Error(`runtime slot ${slot.name} is not declared by any module's descriptor (docs/architecture.md#runtime)`);
    }
    return value as T;
  }

  /** Replace a slot's value (a value that is itself the state: a URL, a snapshot, a running dispatcher). */
  set<T>(slot: StateSlot<T>, value: T): void {
    this.get(slot);
    this.values.set(slot, value);
  }

  /** Reset: each slot as its declaration says, in the order the modules declare them (docs/decisions.md#reset). */
  reset(): void {
    for (const slot of this.slots) {
      if (slot.reset === 'keep') continue;
      if (slot.reset === 'renew') this.values.set(slot, slot.create(this.config));
      else slot.reset(this.values.get(slot));
    }
  }
}
