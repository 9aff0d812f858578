/**
 * A minimal incremental Server-Sent Events parser for load clients: frames end with a blank line,
 * lines are `field: value` (LF, as the API writes them; CRLF and CR inside one chunk are
 * normalised, a CRLF split across two chunks is not), comments start with ':'. It covers what the API writes
 * (id, event, data, retry, comments) at a fraction of a general parser's cost, which matters when
 * one process reads a thousand streams on the machine under test. Event data stays a string.
 */
export interface SseFrame {
  event: string;
  id: string | undefined;
  data: string;
}

export function createSseParser(onEvent: (frame: SseFrame) => void, onComment?: (text: string) => void): (chunk: string) => void {
  let buffer = '';
  const frame = (text: string) => {
    let event = 'message';
    let id: string | undefined;
    let data: string | undefined;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      if (line.charCodeAt(0) === 58 /* : */) {
        onComment?.(line.slice(1).trimStart());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
      else if (field === 'event') event = value;
      else if (field === 'id') id = value;
    }
    if (data !== undefined) onEvent({ event, id, data });
  };
  return (chunk) => {
    // CRLF and CR line ends (the API writes LF) become LF, so one search finds frame ends.
    buffer += chunk.includes('\r') ? chunk.replace(/\r\n?/g, '\n') : chunk;
    let start = 0;
    for (;;) {
      const end = buffer.indexOf('\n\n', start);
      if (end === -1) break;
      frame(buffer.slice(start, end));
      start = end + 2;
    }
    if (start > 0) buffer = buffer.slice(start);
  };
}
