import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';

/**
 * Requests Node's HTTP parser refuses before Express sees them (broken framing, oversized
 * headers, header timeouts) would get Node's bare "400 Bad Request". They get an
 * ErrorMessageDto and an X-Request-Id like every other error, and the connection is closed.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, errorId, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'request_timeout', 'The request was not received in time.']
        : [400, 'Bad Request', 'malformed_request', 'The request is not valid HTTP.'];
  const body = JSON.stringify({ errorId, message });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
  );
}
