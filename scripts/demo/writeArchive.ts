/**
 * Writes the demo's yt-dlp folder: three channels, each in its own folder as yt-dlp lays it out
 * (`<title> [<id>].info.json` in the shape of modern yt-dlp dumps, the subtitle files it writes
 * beside them, a thumbnail per downloaded video, a few media files, and a `-J --flat-playlist` dump of the channel that also lists
 * uploads never downloaded). Deterministic: the same size writes the same bytes.
 *
 * Every video also gets its fate on the platform (what the recorded platform answers about it,
 * round by round: scripts/demo/recordedPlatform.ts): most stay up, some are removed for one
 * reason or another, some come back, some were re-uploaded under a new id.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ChannelTheme, THEMES } from './content.ts';
import { chimeWav } from './media.ts';
import { demoThumbnail } from './thumbnail.ts';

/** What the platform says of a video, in the order of the recorded rounds. */
export type Fate =
  | { kind: 'live' }
  | { kind: 'gone'; message: string }
  /** First only "unavailable", the reason at the last round (a removal notice that got more specific). */
  | { kind: 'gone-then-why'; message: string }
  /** Gone at first, back at the last round (a claim withdrawn). */
  | { kind: 'reinstated'; message: string }
  /** Every answer is a bot check: nothing can be said of it. */
  | { kind: 'unreachable' };

export interface DemoVideo {
  videoId: string;
  channelId: string;
  channelTitle: string;
  title: string;
  durationSeconds: number;
  /** YYYY-MM-DD */
  uploadDate: string;
  fate: Fate;
  /** Whether yt-dlp downloaded it (an info.json); otherwise only the channel's flat playlist lists it. */
  downloaded: boolean;
  /** The video this one is a re-upload of. */
  reuploadOf?: string;
  /** When the recording's first round saw it (seconds): months or years after its upload, before the recording ended. */
  recordedFrom: number;
}

export interface DemoArchive {
  channels: Array<{ channelId: string; title: string; handle: string }>;
  videos: DemoVideo[];
  files: { infoJson: number; subtitles: number; media: number };
}

/** The platform's words for each way a video goes (as classifyMessage reads them). */
const REMOVED = {
  byUploader: 'This video has been removed by the uploader',
  copyright: 'This video is no longer available due to a copyright claim by Nordwind Media GmbH',
  private: 'This video is private',
  terms: "This video has been removed for violating YouTube's Terms of Service",
};
const GONE_FATES: Fate[] = [
  { kind: 'gone', message: REMOVED.byUploader },
  { kind: 'gone', message: REMOVED.copyright },
  { kind: 'gone', message: REMOVED.private },
  { kind: 'gone', message: REMOVED.terms },
  { kind: 'gone-then-why', message: REMOVED.byUploader },
];
/** Languages the platform offers as auto-translated captions (listed in the info.json, never downloaded). */
const AUTO_TRANSLATIONS = ['fr', 'it', 'pt', 'nl', 'ja', 'ko'];
/** Uploads listed by the flat playlist only, per channel: never downloaded, their status unverified. */
const NOT_DOWNLOADED = 3;
/** Every how many videos one has a media file. */
const MEDIA_EVERY = 33;
const DAY = 86_400;
const FIRST_UPLOAD = Date.UTC(2017, 0, 10) / 1000;
const LAST_UPLOAD = Date.UTC(2025, 8, 30) / 1000;
/** The recording's first look at a video comes at least this long after its upload, and before the recording's end. */
const FIRST_LOOK_AFTER = 90 * DAY;
const RECORDING_END = LAST_UPLOAD + 120 * DAY;
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function idFrom(seed: string, length: number): string {
  const digest = createHash('sha256').update(`afterimage demo:${seed}`).digest();
  let id = '';
  for (let i = 0; i < length; i++) id += ID_ALPHABET[digest[i]! & 63];
  return id;
}

/** A small seeded generator (mulberry32): the same seed, the same demo. */
function seeded(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0);
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Seeded per video, so deletions spread over the years the uploads span (and the timeline has more than one bar). */
function recordedFrom(videoId: string, uploadDate: string): number {
  const earliest = Date.parse(`${uploadDate}T00:00:00Z`) / 1000 + FIRST_LOOK_AFTER;
  return Math.floor(earliest + seeded(`${videoId}:recorded`)() * Math.max(0, RECORDING_END - earliest));
}

const fill = (template: string, subject: string) => template.replaceAll('{s}', subject);
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const ymd = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
/** yt-dlp's default file name: the title with the characters file systems refuse replaced. */
const fileBase = (title: string, id: string) => `${title.replace(/[/\\:*?"<>|]/g, '_')} [${id}]`;

interface Cue {
  startMs: number;
  endMs: number;
  original: string;
  translation: string;
}

/** What a video says: sentences about its subject, each once, in a shuffled order, spread over its length. */
function transcript(theme: ChannelTheme, subject: readonly [string, string], durationSeconds: number, seed: string): Cue[] {
  const random = seeded(seed);
  const sentences = [...theme.sentences];
  for (let i = sentences.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [sentences[i], sentences[j]] = [sentences[j]!, sentences[i]!];
  }
  const count = Math.min(sentences.length, 9 + Math.floor(random() * 6));
  const step = Math.max(3_000, Math.floor((durationSeconds * 1000) / (count + 1)));
  return sentences.slice(0, count).map(([original, translation], i) => {
    const startMs = 1_000 + i * step;
    return {
      startMs,
      endMs: startMs + Math.min(step - 200, 5_500),
      original: capitalised(fill(original, subject[0])),
      translation: capitalised(fill(translation, subject[1])),
    };
  });
}

const clock = (ms: number, separator: '.' | ',') => {
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
};

function vtt(cues: Cue[], language: string, text: (cue: Cue) => string): string {
  const body = cues.map((cue) => `${clock(cue.startMs, '.')} --> ${clock(cue.endMs, '.')}\n${text(cue)}\n`).join('\n');
  return `WEBVTT\nKind: captions\nLanguage: ${language}\n\n${body}`;
}

function srt(cues: Cue[], text: (cue: Cue) => string): string {
  return cues.map((cue, index) => `${index + 1}\n${clock(cue.startMs, ',')} --> ${clock(cue.endMs, ',')}\n${text(cue)}\n`).join('\n');
}

/** Speech recognition's captions as the platform's json3 gives them: lower case, no punctuation, words timed one by one. */
function asrJson3(cues: Cue[], durationSeconds: number): string {
  const events: unknown[] = [{ tStartMs: 0, dDurationMs: durationSeconds * 1000, id: 1, wpWinPosId: 1, wsWinStyleId: 1 }];
  for (const cue of cues) {
    const words = cue.original
      .toLowerCase()
      .replace(/[.,;:!?¿¡"]/g, '')
      .split(/\s+/)
      .filter(Boolean);
    const per = Math.floor((cue.endMs - cue.startMs) / words.length);
    events.push({
      tStartMs: cue.startMs,
      dDurationMs: cue.endMs - cue.startMs,
      wWinId: 1,
      segs: words.map((word, index) => ({
        utf8: index === 0 ? word : ` ${word}`,
        ...(index ? { tOffsetMs: index * per } : {}),
        acAsrConf: 0,
      })),
    });
    events.push({ tStartMs: cue.endMs, dDurationMs: 10, wWinId: 1, aAppend: 1, segs: [{ utf8: '\n' }] });
  }
  return JSON.stringify({
    wireMagic: 'pb3',
    pens: [{}],
    wsWinStyles: [{}, { mhModeHint: 2, juJustifCode: 0, sdScrollDir: 3 }],
    wpWinPositions: [{}, { apPoint: 6, ahHorPos: 20, avVerPos: 100, rcRows: 2, ccCols: 40 }],
    events,
  });
}

const captionUrl = (videoId: string, language: string, ext: string, auto: boolean) =>
  `https://www.youtube.com/api/timedtext?v=${videoId}&ei=demo&caps=asr&opi=112496729&xoaf=5&hl=en&ip=0.0.0.0&ipbits=0&expire=1767225600&sparams=ip%2Cipbits%2Cexpire%2Cv%2Cei%2Ccaps%2Copi%2Cxoaf&signature=demo&key=yt8${auto ? '&kind=asr' : ''}&lang=${language}&fmt=${ext}`;

/** A caption list entry of an info.json: every format the platform offers. */
const captionFormats = (videoId: string, language: string, name: string, auto: boolean) =>
  ['json3', 'srv1', 'srv2', 'srv3', 'ttml', 'vtt'].map((ext) => ({ ext, url: captionUrl(videoId, language, ext, auto), name }));

const LANGUAGE_NAMES: Record<string, string> = {
  en: 'English',
  de: 'German',
  es: 'Spanish',
  fr: 'French',
  it: 'Italian',
  pt: 'Portuguese',
  nl: 'Dutch',
  ja: 'Japanese',
  ko: 'Korean',
};

interface Written {
  subtitles: number;
  media: number;
}

async function writeVideo(
  folder: string,
  theme: ChannelTheme,
  channel: { channelId: string; followers: number },
  video: DemoVideo,
  details: { subject: readonly [string, string]; cues: Cue[]; translated: boolean; media: boolean; epoch: number; index: number },
): Promise<Written> {
  const { videoId } = video;
  const base = join(folder, fileBase(video.title, videoId));
  const random = seeded(`${videoId}:numbers`);
  const original = theme.originalTrack;
  const requested: Record<string, { ext: string; url: string; name: string; filepath: string }> = {};
  const subtitles: Record<string, unknown[]> = {};
  const automatic: Record<string, unknown[]> = {};
  const files: Array<[string, string | Buffer]> = [];

  const originalName = `${LANGUAGE_NAMES[theme.language]}${original.kind === 'auto' ? ' (auto-generated)' : ''}`;
  const originalFile = `${base}.${theme.language}.${original.format}`;
  if (original.kind === 'manual') subtitles[theme.language] = captionFormats(videoId, theme.language, originalName, false);
  automatic[theme.language] = captionFormats(videoId, theme.language, `${LANGUAGE_NAMES[theme.language]} (auto-generated)`, true);
  files.push([
    originalFile,
    original.format === 'json3'
      ? asrJson3(details.cues, video.durationSeconds)
      : original.format === 'srt'
        ? srt(details.cues, (cue) => cue.original)
        : vtt(details.cues, theme.language, (cue) => cue.original),
  ]);
  requested[theme.language] = {
    ext: original.format,
    url: captionUrl(videoId, theme.language, original.format, original.kind === 'auto'),
    name: originalName,
    filepath: originalFile,
  };
  if (details.translated) {
    const language = theme.translationLanguage;
    const file = `${base}.${language}.${theme.translationFormat}`;
    subtitles[language] = captionFormats(videoId, language, LANGUAGE_NAMES[language]!, false);
    files.push([
      file,
      theme.translationFormat === 'srt'
        ? srt(details.cues, (cue) => cue.translation)
        : vtt(details.cues, language, (cue) => cue.translation),
    ]);
    requested[language] = {
      ext: theme.translationFormat,
      url: captionUrl(videoId, language, theme.translationFormat, false),
      name: LANGUAGE_NAMES[language]!,
      filepath: file,
    };
  }
  for (const language of AUTO_TRANSLATIONS) {
    if (language !== theme.language)
      automatic[language] = captionFormats(videoId, language, `${LANGUAGE_NAMES[language]} (auto-generated)`, true);
  }
  if (details.media) files.push([`${base}.wav`, chimeWav(4, 330 + (details.index % 5) * 55)]);

  const uploadSeconds = Date.parse(`${video.uploadDate}T00:00:00Z`) / 1000 + 14 * 3600 + Math.floor(random() * 7200);
  const url = `https://www.youtube.com/watch?v=${videoId}`;
  const channelUrl = `https://www.youtube.com/channel/${channel.channelId}`;
  const thumbnails = ['default', 'mqdefault', 'hqdefault', 'sddefault', 'maxresdefault'].map((name, preference) => ({
    url: `https://i.ytimg.com/vi/${videoId}/${name}.jpg`,
    preference: preference - 10,
    id: String(preference),
  }));
  const views = Math.floor(500 + random() * 180_000);
  const description = [
    capitalised(fill(theme.sentences[details.index % theme.sentences.length]![0], details.subject[0])),
    '',
    ...details.cues.slice(0, 3).map((cue) => `${clock(cue.startMs, '.').slice(3, 8)} ${cue.original.split(' ').slice(0, 5).join(' ')}`),
    '',
    `${theme.title}: https://www.youtube.com/${theme.handle}`,
  ].join('\n');
  const info = {
    id: videoId,
    title: video.title,
    thumbnails,
    thumbnail: `https://i.ytimg.com/vi/${videoId}/maxresdefault.jpg`,
    description,
    channel_id: channel.channelId,
    channel_url: channelUrl,
    duration: video.durationSeconds,
    view_count: views,
    average_rating: null,
    age_limit: 0,
    webpage_url: url,
    categories: [theme.category],
    tags: [...theme.tags.slice(details.index % 3, (details.index % 3) + 3), details.subject[0]],
    playable_in_embed: true,
    live_status: 'not_live',
    media_type: 'video',
    release_timestamp: null,
    automatic_captions: automatic,
    subtitles,
    comment_count: Math.floor(views / 120),
    chapters: null,
    like_count: Math.floor(views / 30),
    channel: theme.title,
    channel_follower_count: channel.followers,
    channel_is_verified: false,
    uploader: theme.title,
    uploader_id: theme.handle,
    uploader_url: `https://www.youtube.com/${theme.handle}`,
    upload_date: video.uploadDate.replaceAll('-', ''),
    timestamp: uploadSeconds,
    availability: 'public',
    original_url: url,
    webpage_url_basename: 'watch',
    webpage_url_domain: 'youtube.com',
    extractor: 'youtube',
    extractor_key: 'Youtube',
    playlist: null,
    playlist_index: null,
    display_id: videoId,
    fulltitle: video.title,
    duration_string: `${Math.floor(video.durationSeconds / 60)}:${String(video.durationSeconds % 60).padStart(2, '0')}`,
    release_year: null,
    is_live: false,
    was_live: false,
    requested_subtitles: requested,
    _has_drm: null,
    epoch: details.epoch,
    format: '251 - audio only (medium)',
    format_id: '251',
    ext: details.media ? 'wav' : 'webm',
    protocol: 'https',
    language: theme.language,
    format_note: 'medium',
    acodec: 'opus',
    vcodec: 'none',
    asr: 48000,
    audio_channels: 2,
    _type: 'video',
    _version: { version: '2025.09.26', current_git_head: null, release_git_head: 'demo', repository: 'yt-dlp/yt-dlp' },
  };
  files.push([`${base}.info.json`, JSON.stringify(info)], [`${base}.jpg`, await demoThumbnail(videoId)]);
  await Promise.all(files.map(([path, data]) => writeFile(path, data)));
  return { subtitles: Object.keys(requested).length, media: details.media ? 1 : 0 };
}

/** The channel as `yt-dlp -J --flat-playlist <channel>/videos` dumps it: every upload, newest first, without dates. */
function flatPlaylist(theme: ChannelTheme, channelId: string, followers: number, videos: DemoVideo[]) {
  const channelUrl = `https://www.youtube.com/channel/${channelId}`;
  return {
    id: channelId,
    channel: theme.title,
    channel_id: channelId,
    title: `${theme.title} - Videos`,
    availability: null,
    channel_follower_count: followers,
    description: theme.description,
    tags: theme.tags,
    thumbnails: [
      {
        url: `https://yt3.googleusercontent.com/demo-${channelId}=s900-c-k-c0x00ffffff-no-rj`,
        height: 900,
        width: 900,
        id: 'avatar_uncropped',
      },
    ],
    uploader_id: theme.handle,
    uploader_url: `https://www.youtube.com/${theme.handle}`,
    modified_date: null,
    view_count: null,
    playlist_count: videos.length,
    uploader: theme.title,
    channel_url: channelUrl,
    _type: 'playlist',
    entries: [...videos].reverse().map((video) => ({
      _type: 'url',
      ie_key: 'Youtube',
      id: video.videoId,
      url: `https://www.youtube.com/watch?v=${video.videoId}`,
      title: video.title,
      description: null,
      duration: video.durationSeconds,
      channel_id: null,
      channel: null,
      channel_url: null,
      uploader: null,
      uploader_id: null,
      uploader_url: null,
      thumbnails: [{ url: `https://i.ytimg.com/vi/${video.videoId}/hqdefault.jpg`, height: 94, width: 168 }],
      timestamp: null,
      release_timestamp: null,
      availability: null,
      view_count: null,
      live_status: null,
      channel_is_verified: null,
    })),
    extractor_key: 'YoutubeTab',
    extractor: 'youtube:tab',
    webpage_url: `${channelUrl}/videos`,
    original_url: `https://www.youtube.com/${theme.handle}/videos`,
    webpage_url_basename: 'videos',
    webpage_url_domain: 'youtube.com',
    epoch: Math.floor(LAST_UPLOAD + 20 * DAY),
  };
}

/**
 * Writes the folder for `videosPerChannel` downloaded videos a channel (and its re-uploads and
 * flat-only uploads besides), returning what it wrote and each video's fate.
 */
export async function writeDemoArchive(dir: string, videosPerChannel: number): Promise<DemoArchive> {
  const archive: DemoArchive = { channels: [], videos: [], files: { infoJson: 0, subtitles: 0, media: 0 } };
  for (const [c, theme] of THEMES.entries()) {
    const channelId = `UC${idFrom(`channel:${theme.key}`, 22)}`;
    const followers = 12_000 + c * 41_500;
    const folder = join(dir, theme.title);
    await mkdir(folder, { recursive: true });
    archive.channels.push({ channelId, title: theme.title, handle: theme.handle });
    const channelVideos: DemoVideo[] = [];
    const span = (LAST_UPLOAD - FIRST_UPLOAD) / (videosPerChannel + 1);
    const reuploads: Array<{ of: DemoVideo; subject: readonly [string, string]; cues: Cue[] }> = [];

    for (let i = 0; i < videosPerChannel; i++) {
      const videoId = idFrom(`${theme.key}:${i}`, 11);
      const pattern = theme.titles[i % theme.titles.length]!;
      const subject = theme.subjects[(i + Math.floor(i / theme.titles.length)) % theme.subjects.length]!;
      const round = Math.floor(i / (theme.titles.length * theme.subjects.length));
      const title = capitalised(fill(pattern[0], subject[0])) + (round ? ` (part ${round + 1})` : '');
      // Lengths at least 9 s apart: no two videos of a channel could pass for re-uploads of each other.
      const durationSeconds = 240 + i * 13 + c * 4 + (i % 4);
      const uploadSeconds = FIRST_UPLOAD + Math.floor(i * span + (span / 3) * ((i * 7) % 3));
      const step = i % 10;
      const block = Math.floor(i / 10);
      const fate: Fate =
        i === 5
          ? { kind: 'reinstated', message: REMOVED.copyright }
          : step === 3
            ? GONE_FATES[(block + c) % GONE_FATES.length]!
            : step === 7 && block % 2 === 0
              ? { kind: 'gone', message: c % 2 === 0 ? REMOVED.copyright : REMOVED.byUploader }
              : { kind: 'live' };
      const video: DemoVideo = {
        videoId,
        channelId,
        channelTitle: theme.title,
        title,
        durationSeconds,
        uploadDate: ymd(uploadSeconds),
        fate,
        downloaded: true,
        recordedFrom: recordedFrom(videoId, ymd(uploadSeconds)),
      };
      const cues = transcript(theme, subject, durationSeconds, videoId);
      const written = await writeVideo(folder, theme, { channelId, followers }, video, {
        subject,
        cues,
        translated: i % 3 === 0,
        media: i % MEDIA_EVERY === 1,
        epoch: Math.min(uploadSeconds + (2 + (i % 20)) * DAY, LAST_UPLOAD + 10 * DAY),
        index: i,
      });
      archive.files.infoJson++;
      archive.files.subtitles += written.subtitles;
      archive.files.media += written.media;
      channelVideos.push(video);
      if (step === 7 && block % 2 === 0) reuploads.push({ of: video, subject, cues });
    }

    // Someone put the removed videos up again: the same talk and length under a new id, a little later.
    for (const [n, { of, subject, cues }] of reuploads.entries()) {
      const uploadSeconds = Date.parse(`${of.uploadDate}T00:00:00Z`) / 1000 + (20 + n * 9) * DAY;
      const video: DemoVideo = {
        videoId: idFrom(`${theme.key}:reupload:${of.videoId}`, 11),
        channelId,
        channelTitle: theme.title,
        title: `${of.title} (re-upload)`,
        durationSeconds: of.durationSeconds,
        uploadDate: ymd(uploadSeconds),
        fate: { kind: 'live' },
        downloaded: true,
        reuploadOf: of.videoId,
        recordedFrom: recordedFrom(of.videoId, ymd(uploadSeconds)),
      };
      const written = await writeVideo(folder, theme, { channelId, followers }, video, {
        subject,
        cues,
        translated: false,
        media: false,
        epoch: Math.min(uploadSeconds + 3 * DAY, LAST_UPLOAD + 10 * DAY),
        index: videosPerChannel + n,
      });
      archive.files.infoJson++;
      archive.files.subtitles += written.subtitles;
      channelVideos.push(video);
    }

    for (let n = 0; n < NOT_DOWNLOADED; n++) {
      const [pattern, subject] = [theme.titles[(n * 3 + 1) % theme.titles.length]!, theme.subjects[(n * 5 + 2) % theme.subjects.length]!];
      const videoId = idFrom(`${theme.key}:not-downloaded:${n}`, 11);
      channelVideos.push({
        videoId,
        channelId,
        channelTitle: theme.title,
        title: `${capitalised(fill(pattern[0], subject[0]))} (live stream)`,
        durationSeconds: 3_600 + n * 611,
        uploadDate: ymd(LAST_UPLOAD - n * 40 * DAY),
        fate: { kind: 'unreachable' },
        downloaded: false,
        recordedFrom: recordedFrom(videoId, ymd(LAST_UPLOAD - n * 40 * DAY)),
      });
    }
    channelVideos.sort((a, b) => a.uploadDate.localeCompare(b.uploadDate));
    await writeFile(
      join(folder, `${theme.title} - Videos [${channelId}].json`),
      JSON.stringify(flatPlaylist(theme, channelId, followers, channelVideos)),
    );
    archive.videos.push(...channelVideos);
  }
  return archive;
}
