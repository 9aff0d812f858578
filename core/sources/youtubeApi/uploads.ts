/**
 * listVideos of the Data API source: a channel's uploads playlist, 50 entries a page, completed by
 * videos.list. Entries that videos.list no longer returns (deleted, private) are reported as
 * 'deleted' with what the playlist still says of them. A page of 50 videos costs 2 units.
 */
import { DefiniteError } from '../httpErrors.ts';
import type { ChannelRecord, VideoPage, VideoRecord } from '../types.ts';
import {
  listItems,
  listPage,
  playlistItemVideoId,
  uploadsPlaylistFromChannelId,
  uploadsPlaylistOf,
  videoFromApi,
  videoFromPlaylistItem,
  type ListPage,
} from '../youtubeApiParse.ts';
import { PAGE_SIZE, type ApiClient } from './client.ts';
import { decodeCursor, encodeCursor, type CursorState } from './cursor.ts';

export const VIDEO_PARTS = 'snippet,contentDetails,statistics,status';

function playlistPage(api: ApiClient, playlistId: string, pageToken: string | undefined, signal?: AbortSignal): Promise<unknown> {
  return api.call('playlistItems', { part: 'contentDetails,snippet', playlistId, maxResults: String(PAGE_SIZE), pageToken }, signal);
}

/** The page of the uploads playlist the cursor names, and the playlist it came from; undefined when the channel has no uploads. */
async function uploadsPage(
  api: ApiClient,
  channel: ChannelRecord,
  state: CursorState,
  signal?: AbortSignal,
): Promise<{ playlistId: string; response: unknown } | undefined> {
  const playlistId = state.playlistId ?? uploadsPlaylistFromChannelId(channel.channelId);
  if (!playlistId) throw new DefiniteError(`YouTube Data API: ${channel.channelId} is not a channel id (UC…)`, 400);
  try {
    return { playlistId, response: await playlistPage(api, playlistId, state.pageToken, signal) };
  } catch (error) {
    // No UU… playlist: a channel without uploads, a closed channel, or (rarely) an uploads
    // playlist named otherwise. channels.list tells which; the first two have no videos here.
    if (!(error instanceof DefiniteError && error.status === 404 && !state.pageToken && !state.playlistId)) throw error;
    const channels = await api.call('channels', { part: 'contentDetails', id: channel.channelId }, signal);
    const uploads = listItems(channels)
      .map(uploadsPlaylistOf)
      .find((id) => id !== undefined);
    if (!uploads || uploads === playlistId) return undefined;
    return { playlistId: uploads, response: await playlistPage(api, uploads, undefined, signal) };
  }
}

/** videos.list of these ids, PAGE_SIZE a call: the videos still public, by id. */
async function publicVideos(api: ApiClient, ids: string[], channelId: string, signal?: AbortSignal): Promise<Map<string, VideoRecord>> {
  const found = new Map<string, VideoRecord>();
  for (let start = 0; start < ids.length; start += PAGE_SIZE) {
    const batch = ids.slice(start, start + PAGE_SIZE);
    // No maxResults: videos.list does not take it together with `id`.
    const videos = await api.call('videos', { part: VIDEO_PARTS, id: batch.join(',') }, signal);
    for (const item of listItems(videos)) {
      const record = videoFromApi(item, channelId);
      if (record) found.set(record.videoId, record);
    }
  }
  return found;
}

/** The cursor of the next page (and the progress so far), or progress 1 after the last page. */
function nextOf(page: ListPage, state: CursorState, playlistId: string, channelId: string): Pick<VideoPage, 'next' | 'progress'> {
  const fetched = state.fetched === undefined ? undefined : state.fetched + page.items.length;
  const next = page.nextPageToken && page.nextPageToken !== state.pageToken ? page.nextPageToken : undefined;
  if (!next) return { progress: 1 };
  const nextState: CursorState = { pageToken: next };
  if (fetched !== undefined) nextState.fetched = fetched;
  if (playlistId !== uploadsPlaylistFromChannelId(channelId)) nextState.playlistId = playlistId;
  const result: Pick<VideoPage, 'next' | 'progress'> = { next: encodeCursor(nextState) };
  if (fetched !== undefined && page.totalResults !== undefined && page.totalResults > 0)
    result.progress = Math.min(1, fetched / page.totalResults);
  return result;
}

export async function listUploads(
  api: ApiClient,
  channel: ChannelRecord,
  cursor: string | undefined,
  signal?: AbortSignal,
): Promise<VideoPage> {
  const state = decodeCursor(cursor);
  const uploads = await uploadsPage(api, channel, state, signal);
  if (!uploads) return { videos: [], progress: 1 };
  const page = listPage(uploads.response);
  const entries = page.items
    .map((item) => ({ item, videoId: playlistItemVideoId(item) }))
    .filter((entry): entry is { item: Record<string, unknown>; videoId: string } => entry.videoId !== undefined);
  const found = await publicVideos(api, [...new Set(entries.map((entry) => entry.videoId))], channel.channelId, signal);

  const videos: VideoRecord[] = [];
  const seen = new Set<string>();
  for (const { item, videoId } of entries) {
    if (seen.has(videoId)) continue;
    seen.add(videoId);
    const record = found.get(videoId) ?? videoFromPlaylistItem(item, channel.channelId, 'deleted');
    if (record) videos.push(record);
  }
  return { videos, ...nextOf(page, state, uploads.playlistId, channel.channelId) };
}
