import type { Socket } from 'node:net';
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';

/**
 * Node's HTTP parser refuses some requests before Fastify routes them (headers or URL over 16 KiB, bad
 * framing); they still get the error body, written straight to the socket.
 */
export function writeClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify({
    message: tooLarge ? 'The request line or headers are larger than 16 KiB' : 'The request could not be parsed as HTTP',
    errorCode: 'INVALID_REQUEST',
  });
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  } else socket.destroy(error);
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
