import type { Socket } from 'node:net';
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 417: 'Expectation Failed', 431: 'Request Header Fields Too Large' };

function errorBody(message: string): string {
  return JSON.stringify({ message, errorCode: 'INVALID_REQUEST' });
}

/**
 * Node's HTTP parser refuses some requests before Fastify routes them (headers or URL over 16 KiB, bad framing), and
 * Node ends a request that did not arrive in full within the request timeout (docs/robustness.md#connections); they
 * still get the error body, written straight to the socket, which is then closed: a client that never closes its side
 * must not keep it open.
 */
export function writeClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? 'The request line or headers are larger than 16 KiB'
      : status === 408
        ? `The request did not arrive in full within ${requestTimeoutText(socket)}; send it again`
        : 'The request could not be parsed as HTTP';
  // An answer already under way on this connection (a refusal sent before its body was read) must not be cut into.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const body = errorBody(message);
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

function requestTimeoutText(socket: Socket): string {
  const ms = (socket as Socket & { server?: Server }).server?.requestTimeout ?? 0;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * An `Expect` header other than `100-continue`: Node answers 417 itself, with an empty body, unless the server listens
 * for it. Answered with the error body instead (docs/errors.md); the request is not routed.
 */
export function answerUnmetExpectations(server: Server): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const body = errorBody(`The Expect header asks for ${JSON.stringify(String(request.headers.expect ?? '').slice(0, 64))}; this server meets only 100-continue`);
    response.shouldKeepAlive = false;
    response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
}

/**
 * Node hands a CONNECT request to the server's `connect` listeners instead of its request handler, and with none it
 * drops the connection unanswered. Answered like any other method (a 405 with Allow on a known path, else a 404:
 * docs/decisions.md#status-codes): the request goes to the app with a response on its socket, closed after.
 */
export function answerConnectRequests(server: Server): void {
  server.on('connect', (request: IncomingMessage, socket: Socket) => {
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket);
    response.on('finish', () => {
      response.detachSocket(socket);
      socket.destroySoon();
    });
    server.emit('request', request, response);
  });
}
