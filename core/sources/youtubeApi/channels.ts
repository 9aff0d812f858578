/**
 * resolveChannel of the Data API source: channels.list by handle, id or legacy username; a custom
 * URL through search.list (100 units); a video through videos.list, then its channel.
 */
import type { ChannelQuery } from '../../youtube/channelQuery.ts';
import { DefiniteError } from '../httpErrors.ts';
import type { ChannelRecord } from '../types.ts';
import { channelFromApi, channelsFromSearch, listItems } from '../youtubeApiParse.ts';
import { PAGE_SIZE, type ApiClient } from './client.ts';
import { listedVideo } from './listedVideo.ts';

const CHANNEL_PARTS = 'snippet,contentDetails,statistics,brandingSettings';
const SEARCH_CANDIDATES = 10;

const normaliseName = (value: string) => value.normalize('NFKC').replace(/^@/, '').toLowerCase();
const normaliseTitle = (value: string) =>
  value
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');

/** The first channel of a channels.list answer; a 404 reads as "no such channel". */
export async function channelBy(api: ApiClient, filter: Record<string, string>, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
  let response: unknown;
  try {
    response = await api.call('channels', { part: CHANNEL_PARTS, ...filter }, signal);
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
async function byCustomUrl(api: ApiClient, name: string, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
  const search = await api.call('search', { part: 'snippet', type: 'channel', q: name, maxResults: String(SEARCH_CANDIDATES) }, signal);
  const hits = channelsFromSearch(search);
  if (hits.length > 0) {
    const ids = [...new Set(hits.map((hit) => hit.channelId))];
    const response = await api.call('channels', { part: CHANNEL_PARTS, id: ids.join(','), maxResults: String(PAGE_SIZE) }, signal);
    const byId = new Map<string, ChannelRecord>();
    for (const item of listItems(response)) {
      const record = channelFromApi(item);
      if (record) byId.set(record.channelId, record);
    }
    const candidates = ids.map((id) => byId.get(id)).filter((record): record is ChannelRecord => record !== undefined);
    const wanted = normaliseName(name);
    const exact = candidates.find((record) =>
      [record.handle, record.customUrl].some((value) => value !== undefined && normaliseName(value) === wanted),
    );
    if (exact) return exact;
    const titled = candidates.find((record) => record.title !== undefined && normaliseTitle(record.title) === normaliseTitle(name));
    if (titled) return titled;
  }
  return channelBy(api, { forHandle: `@${name}` }, signal);
}

/** The channel of a video videos.list still returns; a 404 or a gone video reads as none. */
async function byVideo(api: ApiClient, videoId: string, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
  const video = await listedVideo(api, videoId, 'snippet', signal);
  return video ? channelBy(api, { id: video.channelId }, signal) : undefined;
}

export async function resolveApiChannel(api: ApiClient, query: ChannelQuery, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
  switch (query.kind) {
    case 'handle':
      return channelBy(api, { forHandle: query.handle.startsWith('@') ? query.handle : `@${query.handle}` }, signal);
    case 'channelId':
      return channelBy(api, { id: query.channelId }, signal);
    case 'user':
      return channelBy(api, { forUsername: query.name }, signal);
    case 'customUrl':
      return byCustomUrl(api, query.name, signal);
    case 'video':
      return byVideo(api, query.videoId, signal);
  }
}
