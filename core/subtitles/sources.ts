/**
 * Where subtitles are fetched from: the local yt-dlp archive (files beside the video's info.json),
 * the Wayback Machine's timedtext captures (WAYBACK_ENABLED) and the platform's caption tracks
 * (YOUTUBE_CAPTIONS). Each answers the tracks it has for one video, as fetched (not yet parsed).
 */
import { pathToFileURL } from 'node:url';
import type { Config } from '../config.ts';
import { sourceFetchOptions } from '../sources/configured.ts';
import { archiveFileAnswer, archiveFileName, type KeptAnswer } from '../sources/keptAnswer.ts';
import type { WaybackCapture } from '../sources/types.ts';
import { localPath } from '../videos/localPath.ts';
import { findArchiveSubtitleFiles, readArchiveSubtitleFile } from './archiveFiles.ts';
import type { TrackProblem } from './trackFailure.ts';
import type { TrackKind, TrackSource } from './tracks.ts';
import { createWaybackCaptionsSource, type WaybackCaptionsOptions } from './waybackCaptions.ts';
import { createYoutubeCaptionsSource, type YoutubeCaptionsOptions } from './youtubeCaptions.ts';

/** What the fetch knows of a video before asking the sources. */
export interface SubtitleVideo {
  videoId: string;
  channelId: string;
  language: string | null;
  /** file:// URLs of the info.json files the local archive read the video from (video_sources.evidence_url). */
  archiveEvidence: string[];
  /** videos.video_file_url: a media file of the archive, whose base name the subtitle files share. */
  videoFileUrl: string | null;
  /** The stored archive roots: kept evidence names an archive file by its path inside the one that holds it. */
  archiveRoots: string[];
}

interface FetchedTrack {
  /** A BCP 47 tag, as parseTrackName (core/youtube/trackName.ts) read it. */
  language: string;
  trackId: string | null;
  kind: TrackKind;
  source: TrackSource;
  text: string;
  originalBytes: number;
  /** A format or file name that helps the codecs tell SRT from WebVTT. */
  formatHint?: string;
  originUrl: string;
  /** The answer it was read from, kept as the version's evidence when it makes one. */
  answer?: KeptAnswer;
  /** A Wayback capture's timestamp and CDX digest, kept with its answer. */
  wayback?: WaybackCapture['wayback'];
}

export interface SubtitleSource {
  name: TrackSource;
  /**
   * The tracks this source has for the video, and the listed tracks it could not read (the others
   * are kept); throws TransientError when it could not tell which tracks there are.
   */
  fetchTracks(video: SubtitleVideo, signal?: AbortSignal): Promise<{ tracks: FetchedTrack[]; problems: TrackProblem[] }>;
}

/**
 * Subtitle files beside the info.json the archive read the video from, else beside its media file.
 * `folders` (ARCHIVE_DIR, an imported folder) and the stored roots are where kept evidence names a file from.
 */
export function archiveSubtitleSource(folders: readonly string[] = []): SubtitleSource {
  return {
    name: 'archive',
    async fetchTracks(video) {
      const infoJsons = video.archiveEvidence
        .map(localPath)
        .filter((path): path is string => !!path && path.toLowerCase().endsWith('.info.json'));
      const media = video.videoFileUrl ? localPath(video.videoFileUrl) : undefined;
      const candidates = infoJsons.length ? infoJsons : media ? [media] : [];
      const tracks: FetchedTrack[] = [];
      const seen = new Set<string>();
      for (const candidate of candidates) {
        for (const file of await findArchiveSubtitleFiles(candidate)) {
          const track = `${file.language}\0${file.trackId}\0${file.kind}`;
          if (seen.has(track)) continue;
          seen.add(track);
          let read: { text: string; bytes: number };
          let answer: KeptAnswer;
          try {
            read = await readArchiveSubtitleFile(file.path);
            answer = await archiveFileAnswer(file.path, archiveFileName(file.path, [...folders, ...video.archiveRoots]));
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed since the listing
            throw error;
          }
          tracks.push({
            language: file.language,
            trackId: file.trackId,
            kind: file.kind,
            source: 'archive',
            text: read.text,
            originalBytes: read.bytes,
            formatHint: file.path,
            originUrl: pathToFileURL(file.path).href,
            answer,
          });
        }
      }
      return { tracks, problems: [] };
    },
  };
}

export function youtubeSubtitleSource(options: YoutubeCaptionsOptions = {}): SubtitleSource {
  const captions = createYoutubeCaptionsSource(options);
  return {
    name: 'youtube',
    async fetchTracks(video, signal) {
      const { captions: found, problems } = await captions.fetchCaptions(video.videoId, signal);
      const tracks = found.map((track) => ({
        language: track.language,
        trackId: track.trackId,
        kind: track.kind,
        source: 'youtube' as const,
        text: track.text,
        originalBytes: track.bytes,
        formatHint: 'json3',
        originUrl: track.url,
        ...(track.answer ? { answer: track.answer } : {}),
      }));
      return { tracks, problems };
    },
  };
}

export function waybackSubtitleSource(options: WaybackCaptionsOptions = {}): SubtitleSource {
  const captures = createWaybackCaptionsSource(options);
  return {
    name: 'wayback',
    async fetchTracks(video, signal) {
      const { captions: found, problems } = await captures.fetchCaptions(video.videoId, signal);
      const tracks = found.map((track) => ({
        language: track.language,
        trackId: null,
        kind: track.kind,
        source: 'wayback' as const,
        text: track.text,
        originalBytes: track.bytes,
        ...(track.format ? { formatHint: track.format } : {}),
        originUrl: track.url,
        ...(track.answer ? { answer: track.answer } : {}),
        wayback: track.wayback,
      }));
      return { tracks, problems };
    },
  };
}

/**
 * The subtitle sources of this deployment, oldest evidence first (so versions are numbered in the
 * order the content existed): Wayback captures, the local archive, the platform's current tracks.
 */
export function configuredSubtitleSources(config: Config): SubtitleSource[] {
  const fetchOptions = sourceFetchOptions(config);
  const sources: SubtitleSource[] = [];
  if (config.WAYBACK_ENABLED) {
    const base = config.WAYBACK_URL.replace(/\/$/, '');
    sources.push(waybackSubtitleSource({ cdxUrl: `${base}/cdx/search/cdx`, captureBaseUrl: `${base}/web`, fetchOptions }));
  }
  sources.push(archiveSubtitleSource([config.archiveDir]));
  if (config.YOUTUBE_CAPTIONS) sources.push(youtubeSubtitleSource({ webUrl: config.YOUTUBE_WEB_URL, fetchOptions }));
  return sources;
}
