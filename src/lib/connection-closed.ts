// docs/faults.md#fault-rules: a fault that closes the connection of a request injected in process (app.inject) has no
// socket to destroy, and light-my-request ignores destroy() once the body was read (an ambiguous failure closes after
// processing). The fault hook marks the request instead, and the scenario engine's inject transport fails the call as
// a client's fetch would fail.

export const CONNECTION_CLOSED = Symbol.for('service-sandbox.connection-closed');

/** Mark an injected request whose connection a fault closed. */
export function markConnectionClosed(raw: object): void {
  (raw as Record<symbol, boolean>)[CONNECTION_CLOSED] = true;
}

/** Whether a fault closed the connection of this injected request (light-my-request's `response.raw.req`). */
export function connectionWasClosed(raw: object | undefined): boolean {
  return raw !== undefined && (raw as Record<symbol, boolean>)[CONNECTION_CLOSED] === true;
}
