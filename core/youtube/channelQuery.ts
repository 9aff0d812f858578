import { decodeURIComponentSafe } from '../text/decodeUriComponentSafe.ts';

/** What a person pasted into a channel search, once recognised. */
export type ChannelQuery =
  | { kind: 'handle'; handle: string }
  | { kind: 'channelId'; channelId: string }
  | { kind: 'customUrl'; name: string }
  | { kind: 'user'; name: string }
  | { kind: 'video'; videoId: string };

export const CHANNEL_ID = /^UC[A-Za-z0-9_-]{22}$/;
export const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;
const HANDLE = /^[\p{L}\p{N}._-]{3,30}$/u;
/** A name after youtube.com/c/, /user/ or youtube.com/ that a query can carry. */
export const CHANNEL_URL_NAME = /^[\p{L}\p{N}._-]{1,100}$/u;
const HOSTS = /^(?:www\.|m\.|music\.)?(?:youtube\.com|youtube-nocookie\.com)$/i;

export const ACCEPTED_FORMS = [
  '@handle',
  'youtube.com/@handle (with or without https://, www. or m., and trailing paths such as /videos)',
  'youtube.com/channel/UC…',
  'youtube.com/c/name',
  'youtube.com/user/name',
  'a channel id (UC followed by 22 characters)',
  'a video URL: youtube.com/watch?v=…, youtu.be/…, youtube.com/shorts/…, /live/…, /embed/…',
  'an 11-character video id',
];

function fromUrl(url: URL): ChannelQuery | undefined {
  const host = url.hostname.toLowerCase();
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponentSafe);
  if (host === 'youtu.be' || host === 'www.youtu.be') {
    return parts[0] && VIDEO_ID.test(parts[0]) ? { kind: 'video', videoId: parts[0] } : undefined;
  }
  if (!HOSTS.test(host)) return undefined;
  const [first, second] = parts;
  if (first === 'watch') {
    const id = url.searchParams.get('v');
    return id && VIDEO_ID.test(id) ? { kind: 'video', videoId: id } : undefined;
  }
  if (first && ['shorts', 'live', 'embed', 'v', 'e'].includes(first)) {
    return second && VIDEO_ID.test(second) ? { kind: 'video', videoId: second } : undefined;
  }
  if (first?.startsWith('@')) return fromHandle(first);
  if (first === 'channel') return second && CHANNEL_ID.test(second) ? { kind: 'channelId', channelId: second } : undefined;
  if (first === 'c') return second && CHANNEL_URL_NAME.test(second) ? { kind: 'customUrl', name: second } : undefined;
  if (first === 'user') return second && CHANNEL_URL_NAME.test(second) ? { kind: 'user', name: second } : undefined;
  // youtube.com/name is the legacy custom URL form.
  if (first && parts.length <= 2 && CHANNEL_URL_NAME.test(first) && !['results', 'playlist', 'feed', 'hashtag'].includes(first))
    return { kind: 'customUrl', name: first };
  return undefined;
}

function fromHandle(value: string): ChannelQuery | undefined {
  const handle = value.slice(1);
  return HANDLE.test(handle) ? { kind: 'handle', handle: `@${handle}` } : undefined;
}

/** Recognises every form people paste; undefined when it is none of ACCEPTED_FORMS. */
export function parseChannelQuery(input: string): ChannelQuery | undefined {
  const value = input.trim();
  if (!value || value.length > 2048) return undefined;
  if (value.startsWith('@')) return fromHandle(value);
  if (CHANNEL_ID.test(value)) return { kind: 'channelId', channelId: value };
  if (VIDEO_ID.test(value)) return { kind: 'video', videoId: value };
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `https://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return fromUrl(url);
}
