import { randomUUID } from 'node:crypto';
import { maxHeaderSize, STATUS_CODES, type ServerResponse } from 'node:http';
import { finished, type Duplex } from 'node:stream';
import type { Logger } from '../../core/log.ts';

/** What Node's HTTP parser could not take, as the status and message the caller gets. */
function describeClientError(code: string | undefined): [status: number, message: string] {
  if (code === 'HPE_HEADER_OVERFLOW')
    return [431, `the request headers are larger than the ${maxHeaderSize} bytes the server accepts; send fewer or shorter headers`];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'the request was not received in time; send it again'];
  return [400, 'the request is not well-formed HTTP/1.1'];
}

/**
 * The server's `clientError` handler: a request Node cannot parse (malformed, headers too large)
 * never reaches a route, so the error envelope is written on the socket here, then the connection
 * is closed (the parser cannot find where the next request would start), with the headers every
 * answer carries (`everyAnswer`). A response still being sent on the connection (an earlier pipelined
 * request) goes first: the error must not cut into it. Nothing is written on a socket that is gone.
 */
export function answerClientError(log: Logger, everyAnswer: Record<string, string>) {
  return (error: NodeJS.ErrnoException, socket: Duplex): void => {
    const inProgress = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (inProgress && !inProgress.writableFinished) {
      // Unless it answers the very request that failed (timed out while its body was coming in): that
      // response waits for the body, so waiting for it would keep the connection for good.
      if (!inProgress.req.complete) {
        if (inProgress.headersSent) socket.destroy();
        else answer(log, everyAnswer, error, socket);
        return;
      }
      finished(inProgress, () => answer(log, everyAnswer, error, socket));
      return;
    }
    answer(log, everyAnswer, error, socket);
  };
}

function answer(log: Logger, everyAnswer: Record<string, string>, error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] = describeClientError(error.code);
  const requestId = randomUUID();
  log.info('unparsable request', { reqId: requestId, status, code: error.code });
  const body = JSON.stringify({ error: { code: 'INVALID_INPUT', message } });
  socket.end(
    [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      ...Object.entries(everyAnswer).map(([name, value]) => `${name}: ${value}`),
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
