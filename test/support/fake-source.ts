import type { ChannelRecord, SourceName, VideoPage, VideoRecord, VideoSource } from '../../core/sources/types.ts';
import type { ChannelQuery } from '../../core/youtube/channelQuery.ts';

/** An in-memory source for crawl and stream tests; `gate` can hold pages back until released. */
export function fakeSource(options: {
  name: SourceName;
  channel: ChannelRecord;
  videos: VideoRecord[];
  pageSize?: number;
  failWith?: () => Error;
  gate?: Promise<void>;
}) {
  const pageSize = options.pageSize ?? 50;
  let pagesServed = 0;
  const source: VideoSource & { pagesServed(): number } = {
    name: options.name,
    pagesServed: () => pagesServed,
    async resolveChannel(query: ChannelQuery) {
      if (options.failWith) throw options.failWith();
      const { channel } = options;
      const matches =
        (query.kind === 'channelId' && query.channelId === channel.channelId) ||
        (query.kind === 'handle' && query.handle.toLowerCase() === channel.handle?.toLowerCase()) ||
        (query.kind === 'video' && options.videos.some((video) => video.videoId === query.videoId));
      return matches ? channel : undefined;
    },
    async listVideos(_channel: ChannelRecord, cursor?: string): Promise<VideoPage> {
      if (options.failWith) throw options.failWith();
      await options.gate;
      const offset = Number(cursor ?? 0);
      pagesServed += 1;
      const end = offset + pageSize;
      return {
        videos: options.videos.slice(offset, end),
        next: end < options.videos.length ? String(end) : undefined,
        progress: Math.min(1, end / Math.max(1, options.videos.length)),
      };
    },
  };
  return source;
}

let serial = 0;
/** A channel id and `count` distinct video records of it. */
export function generateChannel(count: number, prefix = 'v') {
  serial += 1;
  const channelId = `UC${`test${serial}`.padEnd(22, 'x')}`;
  const videos: VideoRecord[] = Array.from({ length: count }, (_, index) => ({
    videoId: `${prefix}${serial.toString(36)}${index.toString(36)}`.padEnd(11, '_').slice(0, 11),
    channelId,
    title: `Video ${index} of channel ${serial}`,
    durationSeconds: 60 + index,
    uploadDate: `2020-01-${String((index % 28) + 1).padStart(2, '0')}`,
    availability: 'live' as const,
    captions: index % 3 === 0 ? [{ language: 'en', kind: 'auto' as const }] : [],
  }));
  return { channel: { channelId, title: `Channel ${serial}`, handle: `@channel${serial}` } satisfies ChannelRecord, videos };
}
