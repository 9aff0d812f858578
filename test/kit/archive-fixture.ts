/**
 * Builds a realistic yt-dlp archive directory in a temporary folder, from code. Field layout
 * follows real yt-dlp dumps (modern full `.info.json`, channel-level `youtube:tab` info.json,
 * `--flat-playlist -J` dump, youtube-dl-era dumps); all content is generated.
 *
 *   <dir>/<Channel>/<Channel> - Videos [UC…].info.json        channel-level (no entries)
 *   <dir>/<Channel>/<Title> [<id>].info.json                   one per video (N)
 *   <dir>/<Channel>/<Title> [<id>].mp4                         every mediaEvery-th video (dummy bytes)
 *   <dir>/<Channel>/<Title> [<id>].m4a                         + a smaller audio file for the first media video
 *   <dir>/<Channel>/<Title> [<id>].en.vtt / .de.vtt            every subtitlesEvery-th video: en manual, de auto
 *   <dir>/<Channel>/<Title> [<id>].f399.mp4.part               one video with only a partial download
 *   <dir>/<Channel>/Broken upload [<id>].info.json             malformed JSON (truncated)
 *   <dir>/flat-playlist.json                                   flat dump: all N videos + flatOnly more
 *   <dir>/legacy/<Title>-<id>.info.json                        youtube-dl-era channel (uploader_id = UC id,
 *                                                              no channel_id, /user/ and /c/ URLs)
 *
 * Generation is streaming with limited concurrency: 20,000 videos take a few seconds.
 */
import { createHash } from 'node:crypto';
import { writeFile as writeFileCallback } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { random } from './random.ts';

export interface ArchiveFixtureOptions {
  /** Videos of the main channel with a full info.json (default 24). */
  videos?: number;
  /** Where the temporary folder is made (default os.tmpdir()). */
  root?: string;
  /** Files written at once (default 16). */
  concurrency?: number;
  /** Changes every generated id (default 'afterimage'). */
  seed?: string;
  /** Every n-th video (0, n, 2n…) gets a media file; 0 = none (default 4). */
  mediaEvery?: number;
  /** Every n-th video (1, 1+n…) gets .en.vtt (manual) and .de.vtt (auto); 0 = none (default 3). */
  subtitlesEvery?: number;
  /** Videos listed only in the flat playlist dump, with no info.json (default 2). */
  flatOnly?: number;
  /** Formats per info.json: the main size knob (default 8, about 12 KB a file). */
  formats?: number;
  /** Add the youtube-dl-era second channel under legacy/ (default true). */
  legacyChannel?: boolean;
}

export interface ArchiveFixture {
  dir: string;
  channelId: string;
  /** "@…" as in uploader_id */
  handle: string;
  channelTitle: string;
  /** Videos with a full info.json (not the malformed one), in generation order (oldest first). */
  videoIds: string[];
  /** Videos known only from the flat playlist dump (partial records: id, title, duration). */
  flatOnlyVideoIds: string[];
  /** Every video of the main channel a scan should find: videoIds + flatOnlyVideoIds. */
  allVideoIds: string[];
  /** Videos with a media file beside their info.json, and the file names. */
  mediaFiles: Map<string, string>;
  /** Videos with .en.vtt (manual: in `subtitles`) and .de.vtt (auto: only in `automatic_captions`). */
  subtitleVideoIds: string[];
  /** The video whose only media file is a .part (so it has no videoFileUrl). */
  partialVideoId: string;
  malformedFile: string;
  legacy?: { channelId: string; userName: string; customName: string; videoIds: string[] };
  /** Wall time of the generation. */
  elapsedMs: number;
  cleanup(): Promise<void>;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function idFrom(seed: string, label: string, length: number): string {
  const digest = createHash('sha256').update(`${seed}:${label}`).digest();
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[digest[i]! & 63];
  return out;
}

const WORDS = [
  'restoring',
  'a',
  'vintage',
  'lathe',
  'from',
  'scrap',
  'why',
  'the',
  'old',
  'bridge',
  'collapsed',
  'building',
  'tiny',
  'cabin',
  'winter',
  'review',
  'guide',
  'every',
  'mistake',
  'I',
  'made',
  'deep',
  'dive',
  'into',
  'radio',
  'history',
  'field',
  'recording',
  'forest',
  'night',
  'tour',
  'workshop',
];

function titleFor(rand: () => number, index: number): string {
  const n = 3 + Math.floor(rand() * 6);
  const words = Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]!);
  const title = words.join(' ');
  return `${title[0]!.toUpperCase()}${title.slice(1)} (part ${index + 1})`;
}

/** yt-dlp's default filename sanitising, roughly: no slashes, no NULs. */
const safe = (title: string) => title.replace(/[/\\\0]/g, '_').replace(/[:?"*<>|]/g, '_');

function ymd(date: Date) {
  return date.toISOString().slice(0, 10).replace(/-/g, '');
}

function durationString(seconds: number) {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h ? `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}` : `${m}:${String(s).padStart(2, '0')}`;
}

const googlevideo = (id: string, itag: number, salt: string) =>
  `https://rr3---sn-4g5ednsz.googlevideo.com/videoplayback?expire=1763696767&ei=${salt}&ip=0.0.0.0&id=o-${id}${itag}&itag=${itag}&source=youtube&requiressl=yes&mime=video%2Fmp4&dur=213.040&lmt=1706172060366513&c=WEB&sig=AJfQdSswRQIg${salt}${itag}`;

const FORMAT_TEMPLATES = [
  {
    format_id: '249',
    format_note: 'low',
    ext: 'webm',
    acodec: 'opus',
    vcodec: 'none',
    abr: 50,
    asr: 48000,
    audio_channels: 2,
    resolution: 'audio only',
  },
  {
    format_id: '140',
    format_note: 'medium',
    ext: 'm4a',
    acodec: 'mp4a.40.2',
    vcodec: 'none',
    abr: 129,
    asr: 44100,
    audio_channels: 2,
    resolution: 'audio only',
  },
  {
    format_id: '251',
    format_note: 'medium',
    ext: 'webm',
    acodec: 'opus',
    vcodec: 'none',
    abr: 135,
    asr: 48000,
    audio_channels: 2,
    resolution: 'audio only',
  },
  { format_id: '160', format_note: '144p', ext: 'mp4', acodec: 'none', vcodec: 'avc1.4d400c', width: 256, height: 144, fps: 25, vbr: 70 },
  { format_id: '134', format_note: '360p', ext: 'mp4', acodec: 'none', vcodec: 'avc1.4d401e', width: 640, height: 360, fps: 25, vbr: 260 },
  {
    format_id: '18',
    format_note: '360p',
    ext: 'mp4',
    acodec: 'mp4a.40.2',
    vcodec: 'avc1.42001E',
    width: 640,
    height: 360,
    fps: 25,
    vbr: 400,
    asr: 44100,
    audio_channels: 2,
  },
  {
    format_id: '136',
    format_note: '720p',
    ext: 'mp4',
    acodec: 'none',
    vcodec: 'avc1.4d401f',
    width: 1280,
    height: 720,
    fps: 25,
    vbr: 1100,
  },
  { format_id: '247', format_note: '720p', ext: 'webm', acodec: 'none', vcodec: 'vp9', width: 1280, height: 720, fps: 25, vbr: 900 },
  {
    format_id: '137',
    format_note: '1080p',
    ext: 'mp4',
    acodec: 'none',
    vcodec: 'avc1.640028',
    width: 1920,
    height: 1080,
    fps: 25,
    vbr: 2600,
  },
  { format_id: '248', format_note: '1080p', ext: 'webm', acodec: 'none', vcodec: 'vp9', width: 1920, height: 1080, fps: 25, vbr: 1900 },
];

const AUTO_LANGS = [
  ['en', 'English'],
  ['de', 'German'],
  ['fr', 'French'],
  ['es', 'Spanish'],
  ['ja', 'Japanese'],
];

function captionTracks(id: string, lang: string, name: string, auto: boolean) {
  return ['json3', 'srv1', 'srv2', 'srv3', 'ttml', 'vtt'].map((ext) => ({
    ext,
    url: `https://www.youtube.com/api/timedtext?v=${id}&ei=H4wfaafnKtuu&${auto ? 'caps=asr&' : ''}opi=112496729&xoaf=5&hl=en&ip=0.0.0.0&ipbits=0&expire=1763700367&lang=${lang}&fmt=${ext}`,
    name,
    ...(auto ? {} : { impersonate: true }),
    __yt_dlp_client: 'web_safari',
  }));
}

interface VideoSpec {
  id: string;
  title: string;
  base: string;
  duration: number;
  views: number;
  uploaded: Date;
  withSubtitles: boolean;
}

interface ChannelSpec {
  channelId: string;
  title: string;
  handle: string;
  followers: number;
}

const VID = '__VIDEO_ID__';

/**
 * The heavy, repetitive parts of a modern dump (formats, caption track lists, thumbnails), built
 * once as JSON text with a video-id placeholder: generation then costs a string replace per video.
 */
function heavyParts(formatCount: number) {
  const formats = FORMAT_TEMPLATES.slice(0, Math.max(0, Math.min(formatCount, FORMAT_TEMPLATES.length))).map((f) => {
    const tbr = (f.abr ?? 0) + (f.vbr ?? 0);
    return {
      ...f,
      url: googlevideo(VID, Number(f.format_id), 'H4wfaYm0'),
      protocol: 'https',
      filesize: tbr * 75_000,
      tbr,
      container: `${f.ext}_dash`,
      dynamic_range: f.vcodec === 'none' ? null : 'SDR',
      http_headers: {
        'User-Agent': 'Mozilla/5.0',
        Accept: 'text/html,application/xhtml+xml',
        'Accept-Language': 'en-us,en;q=0.5',
        'Sec-Fetch-Mode': 'navigate',
      },
      format: `${f.format_id} - ${f.resolution ?? `${f.width}x${f.height}`} (${f.format_note})`,
    };
  });
  const automatic: Record<string, unknown> = {};
  for (const [lang, name] of AUTO_LANGS) automatic[lang!] = captionTracks(VID, lang!, name!, true);
  const best = formats[formats.length - 1];
  const thumbnails = [
    { url: `https://i.ytimg.com/vi/${VID}/default.jpg`, preference: -13, id: '0', height: 90, width: 120, resolution: '120x90' },
    { url: `https://i.ytimg.com/vi/${VID}/mqdefault.jpg`, preference: -7, id: '1', height: 180, width: 320, resolution: '320x180' },
    { url: `https://i.ytimg.com/vi/${VID}/hqdefault.jpg`, preference: -5, id: '2', height: 360, width: 480, resolution: '480x360' },
    { url: `https://i.ytimg.com/vi/${VID}/maxresdefault.jpg`, preference: -1, id: '3', height: 1080, width: 1920, resolution: '1920x1080' },
    { url: `https://i.ytimg.com/vi_webp/${VID}/maxresdefault.webp`, preference: 0, id: '4' },
  ];
  return {
    formats: JSON.stringify(formats),
    automatic: JSON.stringify(automatic),
    subtitles: JSON.stringify({ en: captionTracks(VID, 'en', 'English', false) }),
    thumbnails: JSON.stringify(thumbnails),
    requestedFormats: JSON.stringify(best ? [best] : []),
    best,
  };
}

type HeavyParts = ReturnType<typeof heavyParts>;
const marker = (name: string) => `\u0000${name}\u0000`;

/** A modern (2024–2025) yt-dlp single-video dump, keys in yt-dlp's order, compact JSON. */
function modernInfo(v: VideoSpec, c: ChannelSpec, rand: () => number, heavy: HeavyParts, epoch: number): string {
  const requested = v.withSubtitles
    ? {
        en: {
          ext: 'vtt',
          url: captionTracks(v.id, 'en', 'English', false)[5]!.url,
          name: 'English',
          filepath: `/downloads/${c.title}/${v.base}.en.vtt`,
        },
        de: {
          ext: 'vtt',
          url: captionTracks(v.id, 'de', 'German', true)[5]!.url,
          name: 'German',
          filepath: `/downloads/${c.title}/${v.base}.de.vtt`,
        },
      }
    : null;
  const best = heavy.best;
  const info = {
    id: v.id,
    title: v.title,
    formats: marker('formats'),
    thumbnails: marker('thumbnails'),
    thumbnail: `https://i.ytimg.com/vi_webp/${v.id}/maxresdefault.webp`,
    description: `${v.title}.\n\nIn this episode we look at ${WORDS[Math.floor(rand() * WORDS.length)]} and more.\n\nChapters:\n0:00 Intro\n1:00 The work\n\nSupport the channel: https://example.org/support\n#${c.title.replace(/\W/g, '')}`,
    channel_id: c.channelId,
    channel_url: `https://www.youtube.com/channel/${c.channelId}`,
    duration: v.duration,
    view_count: v.views,
    average_rating: null,
    age_limit: 0,
    webpage_url: `https://www.youtube.com/watch?v=${v.id}`,
    categories: ['Education'],
    tags: ['workshop', 'restoration', `part ${v.title.length % 7}`],
    playable_in_embed: true,
    live_status: 'not_live',
    media_type: 'video',
    release_timestamp: null,
    _format_sort_fields: ['quality', 'res', 'fps', 'hdr:12', 'source', 'vcodec', 'channels', 'acodec', 'lang', 'proto'],
    automatic_captions: marker('automatic'),
    subtitles: v.withSubtitles ? marker('subtitles') : {},
    comment_count: Math.floor(v.views / 200),
    chapters: [
      { start_time: 0, title: 'Intro', end_time: 60 },
      { start_time: 60, title: 'The work', end_time: v.duration },
    ],
    heatmap: Array.from({ length: 10 }, (_, i) => ({
      start_time: (v.duration / 10) * i,
      end_time: (v.duration / 10) * (i + 1),
      value: Math.round(rand() * 1000) / 1000,
    })),
    like_count: Math.floor(v.views / 40),
    channel: c.title,
    channel_follower_count: c.followers,
    channel_is_verified: true,
    uploader: c.title,
    uploader_id: c.handle,
    uploader_url: `https://www.youtube.com/${c.handle}`,
    upload_date: ymd(v.uploaded),
    timestamp: Math.floor(v.uploaded.getTime() / 1000),
    availability: 'public',
    original_url: `https://www.youtube.com/watch?v=${v.id}`,
    webpage_url_basename: 'watch',
    webpage_url_domain: 'youtube.com',
    extractor: 'youtube',
    extractor_key: 'Youtube',
    playlist: null,
    playlist_index: null,
    display_id: v.id,
    fulltitle: v.title,
    duration_string: durationString(v.duration),
    release_year: null,
    is_live: false,
    was_live: false,
    requested_subtitles: requested,
    _has_drm: null,
    epoch,
    requested_formats: marker('requestedFormats'),
    format: best?.format ?? null,
    format_id: best?.format_id ?? null,
    ext: 'mp4',
    protocol: 'https+https',
    language: 'en',
    format_note: best?.format_note ?? null,
    filesize_approx: best?.filesize ?? null,
    tbr: best?.tbr ?? null,
    width: 1920,
    height: 1080,
    resolution: '1920x1080',
    fps: 25,
    dynamic_range: 'SDR',
    vcodec: 'avc1.640028',
    vbr: 2600,
    stretched_ratio: null,
    aspect_ratio: 1.78,
    acodec: 'mp4a.40.2',
    abr: 129,
    asr: 44100,
    audio_channels: 2,
    _type: 'video',
    _version: {
      version: '2025.10.22',
      current_git_head: null,
      release_git_head: 'c9356f308dd3c5f9f494cb40ed14c5df017b4fe0',
      repository: 'yt-dlp/yt-dlp',
    },
  };
  return JSON.stringify(info).replace(
    /"\\u0000(formats|thumbnails|automatic|subtitles|requestedFormats)\\u0000"/g,
    (_, name: keyof HeavyParts) => (heavy[name] as string).replaceAll(VID, v.id),
  );
}

/** Channel-level info.json as `yt-dlp --write-info-json` leaves it for a channel's Videos tab. */
function channelInfo(c: ChannelSpec, epoch: number): string {
  const avatar = `https://yt3.ggpht.com/ytc/${c.channelId}avatar`;
  const banner = `https://yt3.ggpht.com/${c.channelId}banner`;
  const bannerSizes = [
    [1060, 175],
    [1138, 188],
    [1707, 283],
    [2120, 351],
    [2560, 424],
  ];
  return JSON.stringify({
    id: c.channelId,
    channel: c.title,
    channel_id: c.channelId,
    title: `${c.title} - Videos`,
    availability: null,
    channel_follower_count: c.followers,
    description: `Restorations, repairs and long walks through old machines. New video every week.`,
    tags: ['restoration', 'machines'],
    thumbnails: [
      ...bannerSizes.map(([w, h], i) => ({
        url: `${banner}=w${w}-fcrop64=1,00005a57ffffa5a8-k-c0xffffffff-no-nd-rj`,
        height: h,
        width: w,
        id: String(i),
        resolution: `${w}x${h}`,
      })),
      { url: `${banner}=s0`, id: 'banner_uncropped', preference: -10 },
      { url: `${avatar}=s900-c-k-c0x00ffffff-no-rj`, height: 900, width: 900, id: '6', resolution: '900x900' },
      { url: `${avatar}=s0`, id: 'avatar_uncropped', preference: 1 },
    ],
    uploader_id: c.handle,
    uploader_url: `https://www.youtube.com/${c.handle}`,
    modified_date: null,
    view_count: null,
    playlist_count: null,
    uploader: c.title,
    channel_url: `https://www.youtube.com/channel/${c.channelId}`,
    _type: 'playlist',
    webpage_url: `https://www.youtube.com/${c.handle}/videos`,
    original_url: `https://www.youtube.com/${c.handle}/videos`,
    webpage_url_basename: 'videos',
    webpage_url_domain: 'youtube.com',
    extractor: 'youtube:tab',
    extractor_key: 'YoutubeTab',
    release_year: null,
    epoch,
    _version: {
      version: '2025.10.22',
      current_git_head: null,
      release_git_head: 'c9356f308dd3c5f9f494cb40ed14c5df017b4fe0',
      repository: 'yt-dlp/yt-dlp',
    },
  });
}

/** `yt-dlp --flat-playlist -J https://www.youtube.com/@handle/videos`: entries of `_type: url`, no dates. */
function flatPlaylist(c: ChannelSpec, entries: Array<{ id: string; title: string; duration: number; views: number }>): string {
  return JSON.stringify({
    id: c.channelId,
    channel: c.title,
    channel_id: c.channelId,
    title: `${c.title} - Videos`,
    uploader: c.title,
    uploader_id: c.handle,
    uploader_url: `https://www.youtube.com/${c.handle}`,
    channel_url: `https://www.youtube.com/channel/${c.channelId}`,
    _type: 'playlist',
    extractor_key: 'YoutubeTab',
    extractor: 'youtube:tab',
    webpage_url: `https://www.youtube.com/channel/${c.channelId}/videos`,
    original_url: `https://www.youtube.com/channel/${c.channelId}/videos`,
    entries: entries.map((e) => ({
      _type: 'url',
      ie_key: 'Youtube',
      id: e.id,
      url: `https://www.youtube.com/watch?v=${e.id}`,
      title: e.title,
      description: null,
      duration: e.duration,
      channel_id: null,
      channel: null,
      channel_url: null,
      uploader: null,
      uploader_id: null,
      uploader_url: null,
      thumbnails: [
        {
          url: `https://i.ytimg.com/vi/${e.id}/hqdefault.jpg?sqp=-oaymwEbCKgBEF5IVfKriqkDDggBFQAAiEIYAXABwAEG&rs=AOn4CLCj`,
          height: 94,
          width: 168,
        },
        {
          url: `https://i.ytimg.com/vi/${e.id}/hqdefault.jpg?sqp=-oaymwEcCNACELwBSFXyq4qpAw4IARUAAIhCGAFwAcABBg==&rs=AOn4CLBW`,
          height: 188,
          width: 336,
        },
      ],
      timestamp: null,
      release_timestamp: null,
      availability: null,
      view_count: e.views,
      live_status: null,
      channel_is_verified: null,
      __x_forwarded_for_ip: null,
    })),
  });
}

/** A youtube-dl-era dump: uploader_id is the UC id, no channel_id, no language/availability/epoch. */
function legacyInfo(v: VideoSpec, channelId: string, uploader: string, uploaderUrl: string): string {
  return JSON.stringify({
    id: v.id,
    uploader,
    uploader_id: channelId,
    uploader_url: uploaderUrl,
    upload_date: ymd(v.uploaded),
    license: null,
    creator: null,
    title: v.title,
    alt_title: null,
    thumbnail: `https://i.ytimg.com/vi/${v.id}/maxresdefault.jpg`,
    description: `${v.title} - filmed in 1080p.`,
    categories: ['Film & Animation'],
    tags: ['Video Background', 'Footage'],
    subtitles: {},
    automatic_captions: {},
    duration: v.duration,
    age_limit: 0,
    annotations: null,
    chapters: null,
    webpage_url: `https://www.youtube.com/watch?v=${v.id}`,
    view_count: v.views,
    like_count: 12,
    dislike_count: 0,
    average_rating: 4.9,
    formats: [],
    is_live: null,
    start_time: null,
    end_time: null,
    extractor: 'youtube',
    webpage_url_basename: v.id,
    extractor_key: 'Youtube',
    playlist: null,
    playlist_index: null,
    thumbnails: [{ url: `https://i.ytimg.com/vi/${v.id}/maxresdefault.jpg`, id: '0' }],
    display_id: v.id,
    format: '22 - 1280x720 (hd720)',
    format_id: '22',
    width: 1280,
    height: 720,
    ext: 'mp4',
    fulltitle: v.title,
    _filename: `/home/user/downloads/${v.base}.mp4`,
  });
}

function vtt(lines: string[], language: string, auto: boolean): string {
  const header = auto ? `WEBVTT\nKind: captions\nLanguage: ${language}\n` : 'WEBVTT\n';
  const cues = lines.map(
    (line, i) =>
      `\n00:00:${String(i * 3).padStart(2, '0')}.000 --> 00:00:${String(i * 3 + 3).padStart(2, '0')}.000${auto ? ' align:start position:0%' : ''}\n${line}\n`,
  );
  return header + cues.join('');
}

/** fs's callback API: about half the per-file cost of fs/promises, which matters at 60,000 files. */
function writeFile(path: string, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => writeFileCallback(path, data, (error) => (error ? reject(error) : resolve())));
}

/** Runs tasks from an iterator with at most `concurrency` at once. */
async function runLimited(tasks: Iterator<() => Promise<unknown>>, concurrency: number): Promise<void> {
  let failure: unknown;
  const worker = async () => {
    for (;;) {
      if (failure) return;
      const next = tasks.next();
      if (next.done) return;
      try {
        await next.value();
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failure) throw failure;
}

export async function createArchiveFixture(options: ArchiveFixtureOptions = {}): Promise<ArchiveFixture> {
  const started = performance.now();
  const {
    videos: count = 24,
    root = tmpdir(),
    concurrency = 16,
    seed = 'afterimage',
    mediaEvery = 4,
    subtitlesEvery = 3,
    flatOnly = 2,
    formats = 8,
    legacyChannel = true,
  } = options;
  const dir = await mkdtemp(join(root, 'afterimage-archive-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const channel: ChannelSpec = {
      channelId: `UC${idFrom(seed, 'channel', 22)}`,
      title: 'Workshop Archive',
      handle: `@WorkshopArchive${idFrom(seed, 'handle', 4).replace(/[^A-Za-z0-9]/g, 'x')}`,
      followers: 48_200,
    };
    const channelDir = join(dir, channel.title);
    await mkdir(channelDir, { recursive: true });
    const epoch = 1_763_675_106;
    const rand = random(createHash('sha256').update(seed).digest().readUInt32BE(0));
    const firstDay = Date.UTC(2012, 0, 1);
    const heavy = heavyParts(formats);

    // Pick which video has which extras.
    const partialIndex = count > 2 ? 2 : -1;
    const specs: VideoSpec[] = [];
    const mediaFiles = new Map<string, string>();
    for (let i = 0; i < count; i++) {
      const id = idFrom(seed, `video:${i}`, 11);
      const title = titleFor(rand, i);
      const spec: VideoSpec = {
        id,
        title,
        base: `${safe(title)} [${id}]`,
        duration: 30 + Math.floor(rand() * 3600),
        views: Math.floor(rand() * 2_000_000),
        uploaded: new Date(firstDay + i * 86_400_000 + Math.floor(rand() * 86_400_000)),
        withSubtitles: subtitlesEvery > 0 && i % subtitlesEvery === 1 % subtitlesEvery,
      };
      specs.push(spec);
      if (mediaEvery > 0 && i % mediaEvery === 0 && i !== partialIndex) mediaFiles.set(id, `${spec.base}.mp4`);
    }
    const flatOnlySpecs = Array.from({ length: flatOnly }, (_, k) => ({
      id: idFrom(seed, `flat:${k}`, 11),
      title: `Members-only stream ${k + 1} (not downloaded)`,
      duration: 600 + k,
      views: 100 + k,
    }));
    const firstMediaId = [...mediaFiles.keys()][0];

    function* tasks(): Generator<() => Promise<unknown>> {
      yield () => writeFile(join(channelDir, `${channel.title} - Videos [${channel.channelId}].info.json`), channelInfo(channel, epoch));
      for (let i = 0; i < specs.length; i++) {
        const spec = specs[i]!;
        const base = join(channelDir, spec.base);
        yield () => writeFile(`${base}.info.json`, modernInfo(spec, channel, rand, heavy, epoch));
        if (mediaFiles.has(spec.id)) {
          yield () => writeFile(`${base}.mp4`, Buffer.alloc(2048 + i, 7));
          if (spec.id === firstMediaId) yield () => writeFile(`${base}.m4a`, Buffer.alloc(512, 3));
        }
        if (i === partialIndex) yield () => writeFile(`${base}.f399.mp4.part`, Buffer.alloc(8192, 1));
        if (spec.withSubtitles) {
          yield () => writeFile(`${base}.en.vtt`, vtt([`Welcome back to the workshop.`, `Today: ${spec.title}.`], 'en', false));
          yield () =>
            writeFile(`${base}.de.vtt`, vtt([`willkommen zurück in der werkstatt`, `heute geht es um alte maschinen`], 'de', true));
        }
      }
    }
    await runLimited(tasks(), concurrency);

    const malformedFile = join(channelDir, `Broken upload [${idFrom(seed, 'broken', 11)}].info.json`);
    const brokenSpec: VideoSpec = {
      id: idFrom(seed, 'broken', 11),
      title: 'Broken upload',
      base: 'Broken upload',
      duration: 10,
      views: 1,
      uploaded: new Date(firstDay),
      withSubtitles: false,
    };
    const brokenJson = modernInfo(brokenSpec, channel, rand, heavy, epoch);
    await writeFile(malformedFile, brokenJson.slice(0, Math.floor(brokenJson.length / 2)));

    // Newest first, as a channel's Videos tab lists them.
    const flatEntries = [
      ...flatOnlySpecs,
      ...[...specs].reverse().map((s) => ({ id: s.id, title: s.title, duration: s.duration, views: s.views })),
    ];
    await writeFile(join(dir, 'flat-playlist.json'), flatPlaylist(channel, flatEntries));

    let legacy: ArchiveFixture['legacy'];
    if (legacyChannel) {
      const legacyDir = join(dir, 'legacy');
      await mkdir(legacyDir);
      const legacyId = `UC${idFrom(seed, 'legacy-channel', 22)}`;
      const userName = 'oldbackgrounds';
      const customName = 'OldBackgroundsHD';
      const legacyVideos: VideoSpec[] = [0, 1].map((k) => {
        const id = idFrom(seed, `legacy:${k}`, 11);
        const title = `Mountain ${k + 1} - Video Background HD 1080p`;
        return {
          id,
          title,
          base: `${title.replace(/ /g, '_')}-${id}`,
          duration: 8 + k,
          views: 3417 + k,
          uploaded: new Date(Date.UTC(2015, 0, 5 + k)),
          withSubtitles: false,
        };
      });
      await writeFile(
        join(legacyDir, `${legacyVideos[0]!.base}.info.json`),
        legacyInfo(legacyVideos[0]!, legacyId, 'Old Backgrounds', `http://www.youtube.com/user/${userName}`),
      );
      await writeFile(
        join(legacyDir, `${legacyVideos[1]!.base}.info.json`),
        legacyInfo(legacyVideos[1]!, legacyId, 'Old Backgrounds', `http://www.youtube.com/c/${customName}`),
      );
      await writeFile(
        join(legacyDir, `${legacyVideos[1]!.base}.annotations.xml`),
        '<?xml version="1.0" encoding="UTF-8" ?><document><annotations></annotations></document>',
      );
      legacy = { channelId: legacyId, userName, customName, videoIds: legacyVideos.map((v) => v.id) };
    }

    const videoIds = specs.map((s) => s.id);
    const flatOnlyVideoIds = flatOnlySpecs.map((s) => s.id);
    return {
      dir,
      channelId: channel.channelId,
      handle: channel.handle,
      channelTitle: channel.title,
      videoIds,
      flatOnlyVideoIds,
      allVideoIds: [...videoIds, ...flatOnlyVideoIds],
      mediaFiles,
      subtitleVideoIds: specs.filter((s) => s.withSubtitles).map((s) => s.id),
      partialVideoId: partialIndex >= 0 ? specs[partialIndex]!.id : '',
      malformedFile,
      legacy,
      elapsedMs: Math.round(performance.now() - started),
      cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
