import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface ReceivedEvent {
  event: string;
  id: string | undefined;
  data: any;
}

/**
 * Reads an SSE response with a real parser until the stream ends, `until` says stop, or the
 * time limit passes (then it aborts, so a test never hangs). `onEvent` sees each event as it arrives,
 * for a test that acts on what the stream has shown so far.
 */
export async function readStream(
  url: string,
  options: {
    key: string;
    lastEventId?: string;
    until?: (event: ReceivedEvent, all: ReceivedEvent[]) => boolean;
    onEvent?: (event: ReceivedEvent) => void;
    /** Sees each comment as it arrives (`connected`: the stream has opened). */
    onComment?: (comment: string) => void;
    timeoutMs?: number;
    method?: 'GET' | 'POST';
  },
): Promise<{ status: number; events: ReceivedEvent[]; comments: string[]; ended: boolean }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 15_000);
  const events: ReceivedEvent[] = [];
  const comments: string[] = [];
  let stop = false;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      // Events after the stop point count as never received, like a client that disconnected there.
      if (stop) return;
      const event = { event: message.event ?? 'message', id: message.id, data: JSON.parse(message.data) };
      events.push(event);
      options.onEvent?.(event);
      if (options.until?.(event, events)) stop = true;
    },
    onComment(comment) {
      comments.push(comment);
      options.onComment?.(comment);
    },
  });
  const headers: Record<string, string> = { Accept: 'text/event-stream', 'X-API-Key': options.key };
  if (options.lastEventId) headers['Last-Event-ID'] = options.lastEventId;
  let ended = false;
  let status = 0;
  try {
    const response = await fetch(url, { method: options.method ?? 'GET', headers, signal: controller.signal });
    status = response.status;
    if (!response.ok || !response.body) return { status, events, comments, ended: true };
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
      parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      if (stop) break;
    }
    ended = !stop;
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return { status, events, comments, ended };
}
