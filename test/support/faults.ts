import type { TestDatabase } from './db.ts';
import type { Service } from './cli.ts';
import type { ReceivedEvent } from './sse.ts';

// What the process fault files (test/fault/) read of the services they run and of their database.

export const postJson = (url: string, key: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** The video ids a search stream delivered, in order (a search:video_batch only announces the search:video events that follow it). */
export const streamedVideoIds = (events: ReceivedEvent[]) =>
  events.filter((event) => event.event === 'search:video').map((event) => event.data.videoId as string);

export async function countOf(
  db: TestDatabase,
  table: 'videos' | 'channels' | 'subtitle_tracks' | 'video_status_history' | 'events',
): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from ${db.sql(table)}`;
  return row!.n;
}

/** The API's address from its 'API listening' log line (a minute: processes started side by side with other files). */
export async function listeningUrl(service: Service): Promise<string> {
  const [line] = await service.waitForStderr(/\{[^\n]*"msg":"API listening"[^\n]*\}/, 60_000);
  return (JSON.parse(line) as { url: string }).url;
}
