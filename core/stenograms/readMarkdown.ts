import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { StenogramStore } from './store.ts';

/**
 * The Markdown of a generated stenogram, for its owner (REST, its stream, MCP). A read never deletes:
 * a file that is missing or failing may be a store briefly unmounted or unreachable, so the row stays,
 * the caller gets 503 and retries (reconciling marks the row if the file stays gone).
 */
export async function readStenogramMarkdown(store: StenogramStore, log: Logger, ownerId: string, videoId: string): Promise<string> {
  const markdown = await store.get(ownerId, videoId).catch((error: unknown) => {
    log.warn('stenogram file unreadable', { videoId, store: store.location, error: (error as Error).message });
    return undefined;
  });
  if (markdown !== undefined) return markdown;
  throw new AppError(
    'SERVICE_UNAVAILABLE',
    `the stenogram of ${videoId} cannot be read right now: its file is not in the stenogram store (unreachable or not mounted); retry shortly, and if it stays so, DELETE it and generate it again`,
    { headers: { 'Retry-After': '30' } },
  );
}
