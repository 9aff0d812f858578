/**
 * A minimal incremental Server-Sent Events parser for load clients, a fraction of a general parser's
 * cost when one process reads a thousand streams: what the API writes (LF line ends; CR and CRLF within
 * one chunk are normalised), comments to `onComment`, data kept as a string.
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
      if (line.startsWith(':')) {
        onComment?.(line.slice(1).trimStart());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
      if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
      else if (field === 'event') event = value;
      else if (field === 'id') id = value;
    }
    if (data !== undefined) onEvent({ event, id, data });
  };
  return (chunk) => {
    buffer += chunk.includes('\r') ? chunk.replace(/\r\n?/g, '\n') : chunk;
    let start = 0;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n', start)) {
      frame(buffer.slice(start, end));
      start = end + 2;
    }
    if (start > 0) buffer = buffer.slice(start);
  };
}
