/**
 * Merging the records several files give for the same video or channel. Order-independent: the
 * result does not depend on which file was read first (reads run in parallel).
 */
import type { ChannelRecord, VideoRecord } from '../types.ts';
import type { ChannelNames } from './parse.ts';

export interface HeldVideo {
  video: VideoRecord;
  /** Only flat-playlist entries so far. */
  partial: boolean;
  epoch: number;
}

export interface HeldChannel {
  channel: ChannelRecord;
  names: ChannelNames;
  rank: number;
  epoch: number;
  /** Where the winning fields came from; breaks ties deterministically. */
  evidence: string;
}

/** Fields of `winner` win; fields only `loser` knows fill the gaps. */
function fill<T extends object>(winner: T, loser: T): T {
  const out = { ...winner } as Record<string, unknown>;
  for (const [key, value] of Object.entries(loser)) if (out[key] === undefined && value !== undefined) out[key] = value;
  return out as T;
}

const cmpStr = (a: string | undefined, b: string | undefined) => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0);

/** >0 when a should win over b: full beats flat, then the newer download (epoch), then a stable tie-break. */
function videoPrecedence(a: HeldVideo, b: HeldVideo): number {
  if (a.partial !== b.partial) return a.partial ? -1 : 1;
  if (a.epoch !== b.epoch) return a.epoch - b.epoch;
  return -cmpStr(a.video.evidenceUrl, b.video.evidenceUrl);
}

function mergeCaptions(a: VideoRecord['captions'], b: VideoRecord['captions']): VideoRecord['captions'] {
  if (!a) return b;
  if (!b) return a;
  const byLanguage = new Map<string, 'manual' | 'auto'>();
  for (const c of [...a, ...b]) if (byLanguage.get(c.language) !== 'manual') byLanguage.set(c.language, c.kind);
  return [...byLanguage.entries()].sort(([x], [y]) => cmpStr(x, y)).map(([language, kind]) => ({ language, kind }));
}

export function mergeVideos(a: HeldVideo, b: HeldVideo): HeldVideo {
  const [winner, loser] = videoPrecedence(a, b) >= 0 ? [a, b] : [b, a];
  const video = fill(winner.video, loser.video);
  video.channelId = winner.video.channelId || loser.video.channelId;
  video.videoFileUrl = winner.video.videoFileUrl ?? loser.video.videoFileUrl;
  const captions = mergeCaptions(winner.video.captions, loser.video.captions);
  if (captions) video.captions = captions;
  return { video, partial: a.partial && b.partial, epoch: Math.max(a.epoch, b.epoch) };
}

function channelPrecedence(a: HeldChannel, b: HeldChannel): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.epoch !== b.epoch) return a.epoch - b.epoch;
  return -cmpStr(a.evidence, b.evidence);
}

const union = (a: string[], b: string[]) => [...new Set([...a, ...b])];

export function mergeChannels(a: HeldChannel, b: HeldChannel): HeldChannel {
  const [winner, loser] = channelPrecedence(a, b) >= 0 ? [a, b] : [b, a];
  return {
    channel: fill(winner.channel, loser.channel),
    names: {
      customNames: union(winner.names.customNames, loser.names.customNames),
      userNames: union(winner.names.userNames, loser.names.userNames),
    },
    rank: winner.rank,
    epoch: Math.max(a.epoch, b.epoch),
    evidence: winner.evidence,
  };
}
