// State machines as data, not as scattered ifs (docs/architecture.md#the-shape-in-one-paragraph): each machine is a
// table of allowed moves; `assertTransition` is the one check, and an invalid move is a typed error that the HTTP layer
// maps to 409.

export type TransitionTable<S extends string> = Readonly<Record<S, readonly S[]>>;

export class InvalidTransitionError extends Error {
  override name = 'InvalidTransitionError';

  constructor(
    readonly machine: string,
    readonly from: string,
    readonly to: string,
    readonly allowed: readonly string[],
  ) {
    super(
      `${machine} cannot move from ${from} to ${to}; from ${from} it can move to ${allowed.length ? allowed.join(', ') : 'nothing (final state)'}`,
    );
  }
}

export function canTransition<S extends string>(table: TransitionTable<S>, from: S, to: S): boolean {
  return table[from]?.includes(to) ?? false;
}

export function assertTransition<S extends string>(machine: string, table: TransitionTable<S>, from: S, to: S): void {
  if (!canTransition(table, from, to)) throw new InvalidTransitionError(machine, from, to, table[from] ?? []);
}

export function isFinal<S extends string>(table: TransitionTable<S>, state: S): boolean {
  return (table[state] ?? []).length === 0;
}
