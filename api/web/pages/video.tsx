import { Fragment, type VNode } from 'preact';
import { z } from 'zod';
import { AppError } from '../../../core/errors.ts';
import { videoIdSchema, videoParams } from '../../../core/schemas.ts';
import { keptObservations, unkeptObservationCount } from '../../../core/evidence/observations.ts';
import { metadataVersions, namedObservations, subtitleVersions } from '../../../core/evidence/versions.ts';
import { statusHistory } from '../../../core/status/statusHistory.ts';
import { describeStatus } from '../../../core/videos/statusWording.ts';
import { loadVideos } from '../../../core/videos/loadVideos.ts';
import type { Queryable } from '../../../core/db/database.ts';
import { findStenogram } from '../../../core/stenograms/metadata.ts';
import type { Cue } from '../../../core/subtitles/cue.ts';
import { matchCues } from '../../../core/subtitles/match.ts';
import { readSubtitles } from '../../../core/subtitles/readSubtitles.ts';
import type { SummaryObject } from '../../../core/summaries/summaryObject.ts';
import { clock } from '../../../core/text/clock.ts';
import { mediaSeconds, openMediaFile } from '../../../core/videos/mediaFile.ts';
import type { VideoObject } from '../../../core/videos/videoObject.ts';
import { callerUserId, type Caller } from '../../http/guard.ts';
import { wholeNumber } from '../../http/input.ts';
import type { ActionContext, ApiDeps } from '../../http/route.ts';
import { perform } from '../../http/route.ts';
import { followSummary, generateSummary, summaryIfAny } from '../../actions/summaries.ts';
import { readRawAnswer, sendBundle, videoEvidence } from '../../actions/evidence.ts';
import { downloadSubtitles } from '../../actions/subtitles.ts';
import { readUsage } from '../../actions/usage.ts';
import { whenInWords } from '../duration.ts';
import { downloadVideoFile, readVideo } from '../../actions/videos.ts';
import { tiersWith } from '../errorPage.tsx';
import { FormToken, type FormContext } from '../formToken.tsx';
import { definePage, generationLivePage, redirect } from '../page.tsx';
import { WatchButton } from '../watchButton.tsx';
import { watchButtonOf } from '../watchState.ts';
import { StenogramForm } from './stenogram.tsx';
import { StenogramView } from '../stenogramView.tsx';
import { assetUrl } from '../assets.ts';
import { stenogramMarkdown } from '../../actions/stenograms.ts';
import { StatusBadge } from '../statusBadge.tsx';
import { Thumbnail } from '../videoCard.tsx';
import { KeptAnswers, VersionEvidence } from '../evidenceView.tsx';
import { LinkedDescription, readableEvidence } from '../videoText.tsx';

const videoPath = (videoId: string) => `/videos/${videoId}`;
/** A moment of the video: the page with the player started there (a media fragment, so it works without script). */
const momentUrl = (seconds: number, tq: string | undefined) =>
  `?${new URLSearchParams({ t: String(Math.floor(seconds)), ...(tq ? { tq } : {}) })}#player`;

/** The id of the transcript line a `?t=` link opens at: marked, and scrolled to by its fragment. */
export const CURRENT_CUE_ID = 'current-cue';

/** Other videos' titles, to name links to them (a video not stored, or untitled, keeps its id). */
async function titlesOf(sql: Queryable, videoIds: Array<string | null>): Promise<Map<string, string>> {
  const ids = [...new Set(videoIds.filter((id): id is string => id !== null))];
  const videos = ids.length ? await loadVideos(sql, ids) : [];
  return new Map(videos.flatMap((video) => (video.title ? [[video.videoId, video.title] as const] : [])));
}

const VideoLink = ({ videoId, titles }: { videoId: string; titles: Map<string, string> }) => (
  <a href={videoPath(videoId)}>{titles.get(videoId) ?? `Video ${videoId}`}</a>
);

/** Which tiers have a feature, as a sentence's end: "the Plus and Pro tiers". */
async function tiersSentence(deps: ApiDeps, feature: string): Promise<string> {
  const names = await tiersWith(deps.tiers, feature);
  if (names.length === 0) return 'no tier on this server';
  return `the ${names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0]} tier${names.length > 1 ? 's' : ''}`;
}

/** The chosen track's cues as the subtitle download reads them; none stored is an empty transcript. Shown on the page, not charged: a download is. */
async function transcriptOf(deps: ApiDeps, videoId: string): Promise<{ cues: Cue[]; language: string; kind: string } | undefined> {
  const read = await readSubtitles(deps.sql, videoId, {}, async () => {}).catch((error: unknown) => {
    if (error instanceof AppError && error.code === 'NOT_FOUND') return undefined;
    throw error;
  });
  return read && { cues: read.cues, language: read.track.language, kind: read.track.kind };
}

function Facts({ video, titles }: { video: VideoObject; titles: Map<string, string> }): VNode {
  return (
    <dl class="facts">
      <dt>Channel</dt>
      <dd>
        <a href={`/channels/${video.channelId}`}>{video.channelTitle ?? video.channelId}</a>
      </dd>
      <dt>Status</dt>
      <dd>
        <StatusBadge status={video.status} reason={video.statusReason} /> since{' '}
        <time dateTime={video.statusSince}>{video.statusSince.slice(0, 10)}</time>
      </dd>
      {video.uploadDate ? (
        <>
          <dt>Uploaded</dt>
          <dd>
            <time dateTime={video.uploadDate}>{video.uploadDate}</time>
          </dd>
        </>
      ) : null}
      {video.duration !== null ? (
        <>
          <dt>Duration</dt>
          <dd>{clock(video.duration)}</dd>
        </>
      ) : null}
      {video.viewCount !== null ? (
        <>
          <dt>Views</dt>
          <dd>{video.viewCount.toLocaleString('en')}</dd>
        </>
      ) : null}
      {video.reuploadedAs ? (
        <>
          <dt>Re-uploaded as</dt>
          <dd>
            <VideoLink videoId={video.reuploadedAs} titles={titles} />
          </dd>
        </>
      ) : null}
      {video.reuploadOf ? (
        <>
          <dt>Re-upload of</dt>
          <dd>
            <VideoLink videoId={video.reuploadOf} titles={titles} />
          </dd>
        </>
      ) : null}
    </dl>
  );
}

/** The video's thumbnail on its page: as wide as the page's column (640 at most), on phones the screen's width. */
const PAGE_THUMBNAIL = { width: 640, sizes: '(max-width: 700px) 100vw, 640px' } as const;

/** Where the video is on the platform, and its watch page on the Wayback Machine: the capture kept, else every capture. */
function Elsewhere({ video }: { video: VideoObject }): VNode {
  const watchUrl = `https://www.youtube.com/watch?v=${video.videoId}`;
  return (
    <p class="elsewhere">
      <a href={watchUrl} rel="noopener noreferrer">
        Watch on YouTube
      </a>{' '}
      ·{' '}
      <a href={video.archiveUrl ?? `https://web.archive.org/web/*/${watchUrl}`} rel="noopener noreferrer">
        {video.archiveUrl ? 'Its archived page on the Wayback Machine' : 'Its captures on the Wayback Machine'}
      </a>
    </p>
  );
}

/**
 * How long the archived file plays when that is shorter than the video (a clip: seeking past its
 * end would look broken without a word), read from the file's header; undefined when it is the
 * whole video or its length is unknown.
 */
async function clipSeconds(deps: ApiDeps, video: VideoObject): Promise<number | undefined> {
  if (!video.duration) return undefined;
  const file = await openMediaFile(deps.sql, video.videoId).catch(() => undefined);
  if (!file) return undefined;
  try {
    const seconds = await mediaSeconds(file);
    // A second's slack: the platform rounds the length it states.
    return seconds !== undefined && seconds < video.duration - 1 ? seconds : undefined;
  } finally {
    await file.handle.close();
  }
}

/** The archived media in a player when this server keeps the file; else its thumbnail and where a copy may be. */
function Media({ video, start, clip }: { video: VideoObject; start: number | undefined; clip: number | undefined }): VNode {
  if (video.videoFileUrl?.startsWith('/api/videos/')) {
    return (
      <>
        {/* biome-ignore lint/a11y/useMediaCaption: the transcript beside the player is its text alternative; a <track> would spend a subtitle download on every view */}
        <video
          id="player"
          class="player"
          controls
          preload="metadata"
          poster={video.thumbnailFileUrl ? `${video.thumbnailFileUrl}?w=640` : undefined}
          src={`${videoPath(video.videoId)}/media${start ? `#t=${start}` : ''}`}
        >
          <a href={`${videoPath(video.videoId)}/media`}>Download the archived media file</a>
        </video>
        {clip !== undefined ? (
          <p class="notice clip-note">
            The archived file is a clip of {Math.round(clip)} s ({clock(Math.round(clip))} of the video's {clock(video.duration!)}): the
            player stops there.
          </p>
        ) : null}
      </>
    );
  }
  return (
    <div id="player" class="no-media notice">
      <Thumbnail video={video} {...PAGE_THUMBNAIL} />
      <p>This server keeps no media file of this video.</p>
      {video.videoFileUrl ? (
        <p>
          <a href={video.videoFileUrl} rel="noopener noreferrer">
            A media file kept elsewhere
          </a>
        </p>
      ) : null}
    </div>
  );
}

async function statusHistorySection({ deps, visitor, videoId }: { deps: ApiDeps; visitor: Caller; videoId: string }): Promise<VNode> {
  if (!visitor.tier.features.statusHistory)
    return <p class="notice">The status history is shown in {await tiersSentence(deps, 'statusHistory')}.</p>;
  const [{ current, history }, answers, unkept, metadata, subtitles] = await Promise.all([
    statusHistory(deps.sql, videoId),
    keptObservations(deps.sql, videoId),
    unkeptObservationCount(deps.sql, videoId),
    metadataVersions(deps.sql, videoId),
    subtitleVersions(deps.sql, videoId),
  ]);
  const titles = await titlesOf(
    deps.sql,
    history.map((entry) => entry.linkedVideoId),
  );
  const answersOf = (index: number) => answers.filter((answer) => answer.historyIndex === index);
  // Answers behind a metadata or subtitle version are shown with it, once.
  const named = namedObservations(metadata, subtitles);
  const unlinked = answers.filter((answer) => answer.historyIndex === null && !named.has(`observations/${answer.id}.json`));
  return (
    <>
      <ol class="timeline status-history">
        {history.map((entry, index) => (
          <li key={index}>
            <p>
              <time dateTime={entry.observedAt}>{entry.observedAt.slice(0, 16).replace('T', ' ')} UTC</time>{' '}
              <StatusBadge status={entry.status} reason={entry.reason} />
              {entry.source ? <span class="muted"> seen by {entry.source.replace('_', ' ')}</span> : null}
            </p>
            {entry.claimant ? <p>Claimed by {entry.claimant}</p> : null}
            {/* The kept answers say what the one-line evidence summarises: shown instead of it, never both. */}
            {answersOf(index).length > 0 ? (
              <KeptAnswers answers={answersOf(index)} videoPath={videoPath(videoId)} />
            ) : entry.evidence ? (
              readableEvidence(entry.evidence).map((text) => (
                <p key={text} class="evidence">
                  {text}
                </p>
              ))
            ) : null}
            {entry.linkedVideoId ? (
              <p>
                Re-uploaded as <VideoLink videoId={entry.linkedVideoId} titles={titles} />
              </p>
            ) : null}
          </li>
        ))}
      </ol>
      {unlinked.length > 0 ? (
        <details class="later-answers">
          <summary>
            {unlinked.length} more kept answer{unlinked.length === 1 ? '' : 's'} (first signs not yet confirmed, later checks confirming it)
          </summary>
          <KeptAnswers answers={unlinked} videoPath={videoPath(videoId)} />
        </details>
      ) : null}
      <VersionEvidence metadata={metadata} subtitles={subtitles} answers={answers} videoPath={videoPath(videoId)} />
      <p class="muted">
        Now {describeStatus(current.status, current.reason).toLowerCase()}
        {current.confirmedAt ? `, last confirmed ${current.confirmedAt.slice(0, 10)}` : ''}; next check {current.nextCheckAt.slice(0, 10)}.
        {unkept > 0
          ? ` ${unkept} routine check${unkept === 1 ? '' : 's'} that changed nothing ${unkept === 1 ? 'was' : 'were'} counted, not kept.`
          : ''}
      </p>
      <p>
        <a href={`${videoPath(videoId)}/evidence.zip`} download>
          Download evidence
        </a>{' '}
        <span class="muted">
          (a ZIP of everything above with the raw answers, hashed so anyone can <a href="/evidence/verify">check it</a>; counts as a
          subtitle download)
        </span>
      </p>
    </>
  );
}

function Transcript({
  transcript,
  tq,
  videoId,
  hasPlayer,
  at,
}: {
  transcript: NonNullable<Awaited<ReturnType<typeof transcriptOf>>>;
  tq: string | undefined;
  videoId: string;
  hasPlayer: boolean;
  /** `?t=`: the line said at that second is marked. */
  at: number | undefined;
}): VNode {
  const matching = tq ? new Set(matchCues(transcript.cues, tq)) : undefined;
  const shown = transcript.cues.map((cue, index) => ({ cue, index })).filter(({ index }) => !matching || matching.has(index));
  const current = at === undefined ? undefined : shown.filter(({ cue }) => cue.startMs <= at * 1000).at(-1)?.index;
  return (
    <>
      <form class="filters transcript-search" role="search" method="get" action={`${videoPath(videoId)}#transcript`}>
        <div class="field">
          <label for="tq">Find in the transcript</label>
          <input id="tq" name="tq" type="search" value={tq ?? ''} autoComplete="off" />
        </div>
        <button type="submit">Find</button>
        {tq ? <a href={`${videoPath(videoId)}#transcript`}>Show all</a> : null}
      </form>
      <p id="transcript-count" class="muted" role="status" aria-live="polite">
        {tq ? `${shown.length} of ${transcript.cues.length} lines contain “${tq}”` : `${transcript.cues.length} lines`} (
        {transcript.language}, {transcript.kind})
      </p>
      <ol class="transcript" id="transcript-list" data-seek={hasPlayer ? 'player' : undefined}>
        {shown.map(({ cue, index }) => (
          <li
            key={index}
            class={index === current ? 'current' : undefined}
            id={index === current ? CURRENT_CUE_ID : undefined}
            aria-current={index === current ? 'true' : undefined}
          >
            <a href={momentUrl(cue.startMs / 1000, tq)} data-seconds={cue.startMs / 1000}>
              {clock(cue.startMs / 1000)}
            </a>{' '}
            <span>{cue.text}</span>
          </li>
        ))}
      </ol>
    </>
  );
}

function SummaryBody({ summary, tq }: { summary: SummaryObject; tq: string | undefined }): VNode {
  return (
    <div class="summary-body">
      {summary.title ? <h3>{summary.title}</h3> : null}
      {summary.tldr ? <p class="tldr">{summary.tldr}</p> : null}
      {summary.keyPoints.length ? (
        <ol class="key-points">
          {summary.keyPoints.map((point, index) => (
            <li key={index}>
              <a href={momentUrl(point.startSeconds, tq)} data-seconds={point.startSeconds}>
                {clock(point.startSeconds)}
              </a>{' '}
              {point.text}
            </li>
          ))}
        </ol>
      ) : null}
      {(summary.detailedSummary ?? '')
        .split(/\n\s*\n/)
        .filter((text) => text.trim())
        .map((text, index) => (
          <p key={index}>{text.trim()}</p>
        ))}
      <p class="muted">
        {summary.private ? 'Private: only you see it. ' : ''}Written by {summary.llmModel ?? 'the generator'}.
      </p>
    </div>
  );
}

/** Generate: POST /api/summary/generate for the visitor. */
function GenerateForm({ ctx, videoId, again }: { ctx: FormContext; videoId: string; again: boolean }): VNode {
  const action = `${videoPath(videoId)}/summary`;
  return (
    <form method="post" action={action} class="generate">
      <FormToken ctx={ctx} action={action} />
      <label class="inline">
        <input type="checkbox" name="private" value="true" /> Private (only you see it)
      </label>{' '}
      <button type="submit">{again ? 'Generate again' : 'Generate a summary'}</button>
    </form>
  );
}

async function summarySection({
  ctx,
  videoId,
  tq,
}: {
  ctx: FormContext & ActionContext & { visitor: Caller };
  videoId: string;
  tq: string | undefined;
}): Promise<VNode> {
  const { deps, visitor } = ctx;
  const summary = visitor.tier.features.summaries ? await perform(summaryIfAny, ctx, videoId) : null;
  const mayGenerate = visitor.tier.features.summaryGeneration;
  if (summary?.status === 'generated') return <SummaryBody summary={summary} tq={tq} />;
  if (summary?.status === 'generating') {
    return (
      <div class="summary-live" data-live={`${videoPath(videoId)}/summary/live`}>
        <p id="summary-status" role="status" aria-live="polite">
          A summary is being written… (<a href={`${videoPath(videoId)}#summary`}>refresh</a> to see it when it is ready)
        </p>
        <progress id="summary-progress" max="100" value="0" aria-labelledby="summary-status" />
      </div>
    );
  }
  return (
    <>
      {summary?.status === 'failed' ? (
        <p class="error-box">The last attempt failed: {summary.error ?? 'no reason given'}.</p>
      ) : (
        <p>No summary of this video yet.</p>
      )}
      {mayGenerate ? (
        <GenerateForm ctx={ctx} videoId={videoId} again={summary?.status === 'failed'} />
      ) : (
        <p class="notice">Generating summaries is part of {await tiersSentence(deps, 'summaryGeneration')}.</p>
      )}
    </>
  );
}

/** The visitor's private stenogram, for a tier with stenograms: its text, its live progress, or a Generate button. */
async function stenogramSection({ ctx, videoId }: { ctx: FormContext & { visitor: Caller }; videoId: string }): Promise<VNode | null> {
  const { deps, visitor } = ctx;
  const userId = callerUserId(visitor);
  if (!userId || !visitor.tier.features.stenograms) return null;
  const row = await findStenogram(deps.sql, userId, videoId);
  const live = `${videoPath(videoId)}/stenogram/live`;
  const body =
    row?.status === 'generated' ? (
      <StenogramView markdown={await stenogramMarkdown(deps, row)} />
    ) : row?.status === 'generating' ? (
      <div class="stenogram-live" data-live={live}>
        <p id="stenogram-status" role="status" aria-live="polite">
          Your stenogram is being written… (<a href={`${videoPath(videoId)}#stenogram`}>refresh</a> to see it when it is ready)
        </p>
        <progress id="stenogram-progress" max="100" value="0" aria-labelledby="stenogram-status" />
        <script type="module" src={assetUrl('stenogram.js')} />
      </div>
    ) : (
      <>
        {row ? (
          <p class="error-box">Your stenogram failed: {row.error ?? 'no reason given'}.</p>
        ) : (
          <p>A word-for-word transcript of the dialogue with its speakers, written for you alone.</p>
        )}
        <StenogramForm ctx={ctx} videoId={videoId} again={Boolean(row)} />
      </>
    );
  return (
    <section aria-labelledby="stenogram-heading" id="stenogram">
      <h2 id="stenogram-heading">Your stenogram</h2>
      <p class="muted">Private: only you see it.</p>
      {body}
    </section>
  );
}

type DownloadsLeft = Awaited<ReturnType<typeof readUsage.run>>['limits']['subtitleDownloadsPerDay'];

/**
 * The transcript's download links, with the visitor's subtitle downloads left today beside them. With
 * none left a link is an ordinary one (no `download`), so the click shows the 429 page saying when,
 * rather than a download the browser cancels without a word.
 */
function SubtitleDownloads({ videoId, left }: { videoId: string; left: DownloadsLeft | undefined }) {
  const usedUp = left?.remaining === 0;
  return (
    <p class="downloads" data-downloads-left={left?.remaining ?? undefined}>
      Download:{' '}
      {(['srt', 'vtt', 'txt'] as const).map((format, index) => (
        <Fragment key={format}>
          {index ? ' · ' : ''}
          <a href={`${videoPath(videoId)}/subtitles.${format}`} download={usedUp ? undefined : true}>
            {format.toUpperCase()}
          </a>
        </Fragment>
      ))}
      <span class="muted">
        {' '}
        {left === undefined || left.remaining === null
          ? '(each counts as a subtitle download)'
          : usedUp
            ? `(you have used all ${left.max} subtitle downloads of today; more ${whenInWords(left.resetSeconds)})`
            : `(each counts as a subtitle download: ${left.remaining} of ${left.max} left today)`}
      </span>
    </p>
  );
}

/** `/videos/:videoId`: what the archive knows of a video, its media, transcript, summary and (for its owner) stenogram. */
export const videoPage = definePage({
  method: 'GET',
  path: '/videos/:videoId',
  params: videoParams,
  query: z.object({
    t: wholeNumber('t', 0, 1_000_000).optional(),
    tq: z.string().trim().max(200, { message: 'at most 200 characters' }).optional(),
  }),
  async handler(ctx) {
    const { deps, visitor, params, query } = ctx;
    const video = await perform(readVideo, ctx, params.videoId);
    const tq = query.tq || undefined;
    const hasPlayer = Boolean(video.videoFileUrl?.startsWith('/api/videos/'));
    const [transcript, history, summary, stenogram, clip, usage, watch] = await Promise.all([
      transcriptOf(deps, video.videoId),
      statusHistorySection({ deps, visitor, videoId: video.videoId }),
      summarySection({ ctx, videoId: video.videoId, tq }),
      stenogramSection({ ctx, videoId: video.videoId }),
      hasPlayer ? clipSeconds(deps, video) : undefined,
      perform(readUsage, ctx, undefined),
      watchButtonOf(ctx, { kind: 'video', videoId: video.videoId }),
    ]);
    const downloadsLeft = usage.limitsEnforced ? usage.limits.subtitleDownloadsPerDay : undefined;
    const titles = await titlesOf(deps.sql, [video.reuploadedAs, video.reuploadOf]);
    const title = video.title ?? `Video ${video.videoId}`;
    return {
      title,
      description: `${title} (${describeStatus(video.status, video.statusReason)}), from ${video.channelTitle ?? video.channelId}.`,
      styles: ['facts.css', 'video.css'],
      scripts: ['video.js'],
      body: (
        <article class="video">
          <h1>{title}</h1>
          <WatchButton {...watch} />
          <Facts video={video} titles={titles} />
          <Elsewhere video={video} />
          <Media video={video} start={query.t} clip={clip} />
          {video.description ? (
            <details class="description">
              <summary>Description</summary>
              <LinkedDescription text={video.description} />
            </details>
          ) : null}

          <section aria-labelledby="history-heading">
            <h2 id="history-heading">Status history</h2>
            {history}
          </section>

          <section aria-labelledby="summary-heading" id="summary">
            <h2 id="summary-heading">Summary</h2>
            {summary}
          </section>

          <section aria-labelledby="transcript-heading" id="transcript">
            <h2 id="transcript-heading">Transcript</h2>
            {transcript ? (
              <>
                <SubtitleDownloads videoId={video.videoId} left={downloadsLeft} />
                <Transcript transcript={transcript} tq={tq} videoId={video.videoId} hasPlayer={hasPlayer} at={query.t} />
              </>
            ) : (
              <p>No subtitles of this video are kept.</p>
            )}
          </section>
          {stenogram}
        </article>
      ),
    };
  },
});

/** The player's source: GET /api/videos/:videoId/file's Range route, to this visitor. */
export const videoMediaPage = definePage({
  method: 'GET',
  path: '/videos/:videoId/media',
  // Not strict: the router hands this path the params of /videos/:videoId/:file too ({file: 'media'}).
  params: z.object({ videoId: videoIdSchema }),
  access: downloadVideoFile.access,
  async handler(ctx) {
    return perform(downloadVideoFile, ctx, { exchange: ctx.exchange, videoId: ctx.params.videoId });
  },
});

/** `/videos/:videoId/subtitles.srt|vtt|txt`: GET /api/subtitles/:videoId as a download, charged as it is. */
export const videoSubtitlesPage = definePage({
  method: 'GET',
  path: '/videos/:videoId/:file',
  params: z.strictObject({
    videoId: videoIdSchema,
    file: z.enum(['subtitles.srt', 'subtitles.vtt', 'subtitles.txt'], {
      message: 'expected subtitles.srt, subtitles.vtt or subtitles.txt',
    }),
  }),
  access: downloadSubtitles.access,
  async handler(ctx) {
    const { exchange, params } = ctx;
    return perform(downloadSubtitles, ctx, {
      exchange,
      videoId: params.videoId,
      choice: { format: params.file.slice('subtitles.'.length) as 'srt' | 'vtt' | 'txt' },
    });
  },
});

/** `/videos/:videoId/evidence.zip`: GET /api/videos/:videoId/evidence as a download, charged as it is. */
export const videoEvidencePage = definePage({
  method: 'GET',
  path: '/videos/:videoId/evidence.zip',
  params: z.object({ videoId: videoIdSchema }),
  access: videoEvidence.access,
  async handler(ctx) {
    return sendBundle(ctx, ctx.exchange, await perform(videoEvidence, ctx, ctx.params.videoId));
  },
});

/** `/videos/:videoId/evidence/:observationId`: one kept answer, raw, as plain text. */
export const videoRawAnswerPage = definePage({
  method: 'GET',
  path: '/videos/:videoId/evidence/:observationId',
  params: z.strictObject({ videoId: videoIdSchema, observationId: z.string().regex(/^\d{1,18}$/, { message: 'expected a number' }) }),
  access: readRawAnswer.access,
  async handler(ctx) {
    return perform(readRawAnswer, ctx, { exchange: ctx.exchange, videoId: ctx.params.videoId, observationId: ctx.params.observationId });
  },
});

/** Generate: POST /api/summary/generate for the visitor, then the page with its progress. */
export const videoSummaryPage = definePage({
  method: 'POST',
  path: '/videos/:videoId/summary',
  params: videoParams,
  form: z.object({ private: z.literal('true', { message: 'expected true, or leave it out' }).optional() }),
  access: generateSummary.access,
  async handler(ctx) {
    const { params, form } = ctx;
    await perform(generateSummary, ctx, { videoId: params.videoId, private: form.private === 'true' });
    return redirect(`${videoPath(params.videoId)}#summary`);
  },
});

/** The summary's progress as GET /api/summary/:videoId/stream sends it, to this visitor. */
export const videoSummaryLivePage = generationLivePage('/videos/:videoId/summary/live', followSummary);
