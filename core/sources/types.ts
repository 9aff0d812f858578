import type { ChannelQuery } from '../youtube/channelQuery.ts';
import type { KeptAnswer } from './keptAnswer.ts';

export type SourceName = 'archive' | 'youtube_api' | 'wayback';

/** A channel as a source describes it; only channelId is certain, the rest as far as known. */
export interface ChannelRecord {
  channelId: string;
  title?: string;
  handle?: string;
  customUrl?: string;
  description?: string;
  avatarUrl?: string;
  bannerUrl?: string;
  subscriberCount?: number;
  videoCount?: number;
  country?: string;
  channelStatus?: 'live' | 'deleted';
}

/** A video as one source saw it. Absent fields are unknown to that source, not empty. */
export interface VideoRecord {
  videoId: string;
  channelId: string;
  title?: string;
  description?: string;
  durationSeconds?: number;
  viewCount?: number;
  /** YYYY-MM-DD */
  uploadDate?: string;
  thumbnailUrl?: string;
  /** A Wayback capture URL with its 14-digit timestamp. */
  archiveUrl?: string;
  /** Where an archived media file of the video is (set by the local archive). */
  videoFileUrl?: string;
  /** Where a thumbnail image of the video is kept beside it (a file:// URL, set by the local archive). */
  thumbnailFileUrl?: string;
  tags?: string[];
  language?: string;
  /** What the source says of availability; archives-only videos are 'deleted'. */
  availability?: 'live' | 'deleted' | 'unknown';
  /** When the source saw that availability (ISO 8601): an archive's download time; absent, when it was read (now). */
  observedAt?: string;
  /** Caption languages the source knows of. */
  captions?: Array<{ language: string; kind: 'manual' | 'auto' }>;
  /** The capture or file this record was read from, kept as provenance. */
  evidenceUrl?: string;
  /** That file's path inside the archive folder it was read from ('/'-separated): how kept evidence names it. */
  evidencePath?: string;
  /** The Wayback capture the record was read from, as it answered: kept as evidence when it decides a status or fills metadata. */
  capture?: WaybackCapture;
}

/** A Wayback capture as evidence keeps it: the answer, the capture's 14-digit timestamp and its CDX digest, and its reading. */
export interface WaybackCapture {
  said: string;
  answer: KeptAnswer;
  wayback: { timestamp: string; digest: string | null };
}

/** One video a source found by its id, with the channel it belongs to. */
export interface VideoSighting {
  video: VideoRecord;
  channel: ChannelRecord;
}

export interface VideoPage {
  videos: VideoRecord[];
  /** Opaque cursor of the next page; absent on the last page. */
  next?: string;
  /** Rough progress within this source, 0..1, when the source can tell. */
  progress?: number;
}

/**
 * One place videos can be found. Every network call inside goes through core/sources/http.ts
 * (timeouts, p-retry backoff, transient vs definite failures).
 */
export interface VideoSource {
  name: SourceName;
  /** The channel a query names (a video query resolves to its channel); undefined when unknown here. */
  resolveChannel(query: ChannelQuery, signal?: AbortSignal): Promise<ChannelRecord | undefined>;
  /** One page of the channel's videos; pass the previous page's `next` to continue. */
  listVideos(channel: ChannelRecord, cursor: string | undefined, signal?: AbortSignal): Promise<VideoPage>;
  /**
   * One video by its id, with its channel; undefined when unknown here. Without it a lookup reads
   * the pages of the channel resolveChannel names for the video (core/subtitles/lookUpVideo.ts).
   */
  lookupVideo?(videoId: string, signal?: AbortSignal): Promise<VideoSighting | undefined>;
  /** Prepares what the first request would otherwise wait for (the archive's index); facts for the log. */
  warmUp?(): Promise<Record<string, unknown>>;
}
