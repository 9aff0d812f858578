/**
 * The YouTube Data API v3 as a video source: channels by handle, id, legacy username, custom URL or
 * one of their videos; a channel's videos through its uploads playlist, 50 at a time, completed by
 * videos.list. Entries of the uploads playlist that videos.list no longer returns (deleted, private)
 * are reported as 'deleted' with what the playlist still says of them.
 *
 * Quota (units per call): channels.list 1, playlistItems.list 1, videos.list 1, search.list 100; only
 * a custom URL (youtube.com/c/name) needs a search. A page of 50 videos costs 2 units.
 *
 * The key travels in the `key` query parameter and never appears in an error message.
 */
import type { ChannelQuery } from '../youtube/channelQuery.ts';
import { DefiniteError, TransientError, fetchJson, type FetchOptions } from './http.ts';
import type { ChannelRecord, VideoPage, VideoRecord, VideoSource } from './types.ts';
import {
  channelFromApi,
  channelsFromSearch,
  isTransientApiError,
  listItems,
  listPage,
  parseApiError,
  playlistItemVideoId,
  uploadsPlaylistFromChannelId,
  uploadsPlaylistOf,
  videoFromApi,
  videoFromPlaylistItem,
} from './youtubeApiParse.ts';

export interface YoutubeApiSourceOptions {
  apiKey: string;
  /** Without a trailing slash; tests point it at a local server. */
  baseUrl?: string;
  /** Timeouts and retry backoff of every call; `isTransient` is set by this source. */
  fetchOptions?: Omit<FetchOptions, 'isTransient'>;
}

export interface YoutubeApiSource extends VideoSource {
  /** Which of these ids (at most 50) videos.list still returns: the others are not public any more. */
  publicVideoIds(videoIds: string[], signal?: AbortSignal): Promise<Set<string>>;
  name: 'youtube_api';
  /** Quota units the calls made so far cost (retries not counted), as the API bills them. */
  readonly quotaUnitsUsed: number;
}

type Endpoint = 'channels' | 'search' | 'playlistItems' | 'videos';

export const QUOTA_COST: Record<Endpoint, number> = { channels: 1, search: 100, playlistItems: 1, videos: 1 };
const CHANNEL_PARTS = 'snippet,contentDetails,statistics,brandingSettings';
const VIDEO_PARTS = 'snippet,contentDetails,statistics,status';
/** The API's largest page and the most ids one videos.list / channels.list call takes. */
export const PAGE_SIZE = 50;
const SEARCH_CANDIDATES = 10;
const CURSOR_PREFIX = 'v1:';

interface CursorState {
  pageToken?: string;
  /** Playlist entries seen before this page; undefined when the cursor came from elsewhere. */
  fetched?: number;
  /** Set only when the uploads playlist is not the usual UU… of the channel id. */
  playlistId?: string;
}

/** The cursor is opaque to callers: the API's page token plus the count seen so far. */
export function encodeCursor(state: CursorState): string {
  const params = new URLSearchParams();
  if (state.pageToken) params.set('t', state.pageToken);
  if (state.fetched !== undefined) params.set('n', String(state.fetched));
  if (state.playlistId) params.set('p', state.playlistId);
  return CURSOR_PREFIX + params.toString();
}

export function decodeCursor(cursor: string | undefined): CursorState {
  if (!cursor) return { fetched: 0 };
  // A bare nextPageToken (from an older cursor format or a caller) still works, without progress.
  if (!cursor.startsWith(CURSOR_PREFIX)) return { pageToken: cursor };
  const params = new URLSearchParams(cursor.slice(CURSOR_PREFIX.length));
  const state: CursorState = {};
  const token = params.get('t');
  if (token) state.pageToken = token;
  const fetched = Number(params.get('n'));
  if (params.has('n') && Number.isSafeInteger(fetched) && fetched >= 0) state.fetched = fetched;
  const playlistId = params.get('p');
  if (playlistId) state.playlistId = playlistId;
  return state;
}

const normaliseName = (value: string) => value.normalize('NFKC').replace(/^@/, '').toLowerCase();
const normaliseTitle = (value: string) => value.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

function joinSignals(...signals: Array<AbortSignal | undefined>): AbortSignal | undefined {
  const present = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

export function createYoutubeApiSource(options: YoutubeApiSourceOptions): YoutubeApiSource {
  const { apiKey, fetchOptions = {} } = options;
  if (!apiKey) throw new Error('the YouTube Data API source needs an API key');
  const baseUrl = (options.baseUrl ?? 'https://www.googleapis.com/youtube/v3').replace(/\/+$/, '');
  let quotaUnitsUsed = 0;

  /** Removes the key from any text: as itself, and as the value of a `key=` query parameter. */
  const redact = (text: string) => text.split(apiKey).join('***').replace(/([?&]key=)[^&\s"'#]*/gi, '$1***');

  function describe(error: unknown, endpoint: Endpoint, last: { status: number; body: string } | undefined): Error {
    const where = `YouTube Data API ${endpoint}.list`;
    const status = error instanceof TransientError || error instanceof DefiniteError ? error.status : undefined;
    const info = last && status === last.status ? parseApiError(last.body) : undefined;
    const explained = info ? `${info.reasons[0] ? `${info.reasons[0]}: ` : ''}${info.message ?? info.status ?? 'no message'}` : undefined;
    if (error instanceof DefiniteError) {
      return new DefiniteError(redact(`${where} answered ${error.status}${explained ? ` (${explained})` : ''}`), error.status);
    }
    if (error instanceof TransientError) {
      return new TransientError(redact(`${where}: ${explained ?? error.message}`), error.status);
    }
    // Anything else that escaped the retries (a body that stalled past the timeout, a reset while
    // reading it) is a network fault: worth trying again later.
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return new TransientError(redact(`${where}: ${message}`));
  }

  async function call(endpoint: Endpoint, params: Record<string, string | undefined>, signal?: AbortSignal): Promise<unknown> {
    const url = new URL(`${baseUrl}/${endpoint}`);
    for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
    url.searchParams.set('key', apiKey);
    let last: { status: number; body: string } | undefined;
    const joined = joinSignals(signal, fetchOptions.signal);
    const callOptions: FetchOptions = {
      ...fetchOptions,
      // Keeps the error body (fetchText drops it) so that the API's reason and message can be told.
      isTransient: (status, body) => {
        if (status >= 400) last = { status, body };
        return isTransientApiError(status, body);
      },
    };
    if (joined) callOptions.signal = joined;
    else delete callOptions.signal;
    quotaUnitsUsed += QUOTA_COST[endpoint];
    try {
      return await fetchJson(url.toString(), callOptions);
    } catch (error) {
      if (joined?.aborted) throw error;
      throw describe(error, endpoint, last);
    }
  }

  /** The first channel of a channels.list answer; a 404 reads as "no such channel". */
  async function channelBy(filter: Record<string, string>, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
    let response: unknown;
    try {
      response = await call('channels', { part: CHANNEL_PARTS, ...filter }, signal);
    } catch (error) {
      if (error instanceof DefiniteError && error.status === 404) return undefined;
      throw error;
    }
    for (const item of listItems(response)) {
      const record = channelFromApi(item);
      if (record) return record;
    }
    return undefined;
  }

  /**
   * youtube.com/c/name: search.list for channels, then channels.list on the candidates (one call)
   * to read their customUrl. An exact customUrl (today: handle) match wins, then an exact title
   * match (case, spaces and punctuation ignored). With neither, a handle lookup of @name; the first
   * search hit alone is not trusted (searches for a name often rank look-alike channels first).
   */
  async function byCustomUrl(name: string, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
    const search = await call('search', { part: 'snippet', type: 'channel', q: name, maxResults: String(SEARCH_CANDIDATES) }, signal);
    const hits = channelsFromSearch(search);
    if (hits.length > 0) {
      const ids = [...new Set(hits.map((hit) => hit.channelId))];
      const response = await call('channels', { part: CHANNEL_PARTS, id: ids.join(','), maxResults: String(PAGE_SIZE) }, signal);
      const byId = new Map<string, ChannelRecord>();
      for (const item of listItems(response)) {
        const record = channelFromApi(item);
        if (record) byId.set(record.channelId, record);
      }
      const candidates = ids.map((id) => byId.get(id)).filter((record): record is ChannelRecord => record !== undefined);
      const wanted = normaliseName(name);
      const exact = candidates.find((record) => [record.handle, record.customUrl].some((value) => value !== undefined && normaliseName(value) === wanted));
      if (exact) return exact;
      const titled = candidates.find((record) => record.title !== undefined && normaliseTitle(record.title) === normaliseTitle(name));
      if (titled) return titled;
    }
    return channelBy({ forHandle: `@${name}` }, signal);
  }

  async function resolveChannel(query: ChannelQuery, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
    switch (query.kind) {
      case 'handle':
        return channelBy({ forHandle: query.handle.startsWith('@') ? query.handle : `@${query.handle}` }, signal);
      case 'channelId':
        return channelBy({ id: query.channelId }, signal);
      case 'user':
        return channelBy({ forUsername: query.name }, signal);
      case 'customUrl':
        return byCustomUrl(query.name, signal);
      case 'video': {
        let response: unknown;
        try {
          response = await call('videos', { part: 'snippet', id: query.videoId }, signal);
        } catch (error) {
          if (error instanceof DefiniteError && error.status === 404) return undefined;
          throw error;
        }
        const video = listItems(response)
          .map((item) => videoFromApi(item))
          .find((record) => record?.videoId === query.videoId);
        return video ? channelBy({ id: video.channelId }, signal) : undefined;
      }
    }
  }

  async function playlistPage(playlistId: string, pageToken: string | undefined, signal?: AbortSignal): Promise<unknown> {
    return call('playlistItems', { part: 'contentDetails,snippet', playlistId, maxResults: String(PAGE_SIZE), pageToken }, signal);
  }

  async function listVideos(channel: ChannelRecord, cursor: string | undefined, signal?: AbortSignal): Promise<VideoPage> {
    const state = decodeCursor(cursor);
    let playlistId = state.playlistId ?? uploadsPlaylistFromChannelId(channel.channelId);
    if (!playlistId) throw new DefiniteError(`YouTube Data API: ${channel.channelId} is not a channel id (UC…)`, 400);
    let response: unknown;
    try {
      response = await playlistPage(playlistId, state.pageToken, signal);
    } catch (error) {
      // No UU… playlist: a channel without uploads, a closed channel, or (rarely) an uploads
      // playlist named otherwise. channels.list tells which; the first two have no videos here.
      if (!(error instanceof DefiniteError && error.status === 404 && !state.pageToken && !state.playlistId)) throw error;
      const channels = await call('channels', { part: 'contentDetails', id: channel.channelId }, signal);
      const uploads = listItems(channels).map(uploadsPlaylistOf).find((id) => id !== undefined);
      if (!uploads || uploads === playlistId) return { videos: [], progress: 1 };
      playlistId = uploads;
      response = await playlistPage(playlistId, undefined, signal);
    }

    const page = listPage(response);
    const entries = page.items
      .map((item) => ({ item, videoId: playlistItemVideoId(item) }))
      .filter((entry): entry is { item: Record<string, unknown>; videoId: string } => entry.videoId !== undefined);
    const ids = [...new Set(entries.map((entry) => entry.videoId))];

    const found = new Map<string, VideoRecord>();
    for (let start = 0; start < ids.length; start += PAGE_SIZE) {
      const batch = ids.slice(start, start + PAGE_SIZE);
      // No maxResults: videos.list does not take it together with `id`.
      const videos = await call('videos', { part: VIDEO_PARTS, id: batch.join(',') }, signal);
      for (const item of listItems(videos)) {
        const record = videoFromApi(item, channel.channelId);
        if (record) found.set(record.videoId, record);
      }
    }

    const videos: VideoRecord[] = [];
    const seen = new Set<string>();
    for (const { item, videoId } of entries) {
      if (seen.has(videoId)) continue;
      seen.add(videoId);
      const record = found.get(videoId) ?? videoFromPlaylistItem(item, channel.channelId, 'deleted');
      if (record) videos.push(record);
    }

    const result: VideoPage = { videos };
    const fetched = state.fetched === undefined ? undefined : state.fetched + page.items.length;
    const next = page.nextPageToken && page.nextPageToken !== state.pageToken ? page.nextPageToken : undefined;
    if (next) {
      const nextState: CursorState = { pageToken: next };
      if (fetched !== undefined) nextState.fetched = fetched;
      if (playlistId !== uploadsPlaylistFromChannelId(channel.channelId)) nextState.playlistId = playlistId;
      result.next = encodeCursor(nextState);
      if (fetched !== undefined && page.totalResults !== undefined && page.totalResults > 0) {
        result.progress = Math.min(1, fetched / page.totalResults);
      }
    } else {
      result.progress = 1;
    }
    return result;
  }

  /** Which of these ids (at most 50) videos.list still returns: the others are not public any more. */
  async function publicVideoIds(videoIds: string[], signal?: AbortSignal): Promise<Set<string>> {
    if (videoIds.length > PAGE_SIZE) throw new Error(`videos.list takes at most ${PAGE_SIZE} ids`);
    const response = await call('videos', { part: 'id', id: videoIds.join(',') }, signal);
    return new Set(listItems(response).map((item) => item.id).filter((id): id is string => typeof id === 'string'));
  }

  return {
    name: 'youtube_api',
    get quotaUnitsUsed() {
      return quotaUnitsUsed;
    },
    resolveChannel,
    listVideos,
    publicVideoIds,
  };
}
