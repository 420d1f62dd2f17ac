import type { Socket } from 'node:net';

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
