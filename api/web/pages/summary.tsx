import type { VNode } from 'preact';
import { videoParams } from '../../../core/schemas.ts';
import { summaryPageUrl, type SummaryObject } from '../../../core/summaries/summaryObject.ts';
import { clock } from '../../../core/text/clock.ts';
import { loadVideos } from '../../../core/videos/loadVideos.ts';
import type { VideoObject } from '../../../core/videos/videoObject.ts';
import { publicOrigin } from '../../http/publicOrigin.ts';
import { perform, PUBLIC_PAGE_CACHE } from '../../http/route.ts';
import { readPublicSummary } from '../../actions/summaries.ts';
import { definePage } from '../page.tsx';
import { StatusBadge } from '../statusBadge.tsx';
import { languageName } from '../summaryCards.tsx';

const watchUrl = (videoId: string) => `https://www.youtube.com/watch?v=${videoId}`;

/** JSON inside <script>: no character of it can end the element or open a comment (`<`, `>`, `&` as escapes). */
const scriptSafeJson = (value: unknown) =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The video as schema.org's VideoObject: what search engines show beside a link. The platform's URLs
 * are data here; the page never loads anything from another host.
 */
function videoJsonLd(summary: SummaryObject, video: VideoObject | undefined, canonical: string) {
  return {
    '@context': 'https://schema.org',
    '@type': 'VideoObject',
    name: summary.videoTitle ?? summary.title,
    description: summary.tldr,
    abstract: summary.tldr,
    url: canonical,
    ...(video?.uploadDate ? { uploadDate: video.uploadDate } : {}),
    ...(video?.thumbnailUrl ? { thumbnailUrl: video.thumbnailUrl } : {}),
    ...(video?.duration ? { duration: `PT${video.duration}S` } : {}),
    embedUrl: `https://www.youtube.com/embed/${summary.videoId}`,
    contentUrl: watchUrl(summary.videoId),
    ...(summary.language ? { inLanguage: summary.language } : {}),
    ...(summary.tags.length ? { keywords: summary.tags.join(', ') } : {}),
    ...(summary.channelTitle
      ? { author: { '@type': 'Organization', name: summary.channelTitle, url: `https://www.youtube.com/channel/${summary.channelId}` } }
      : {}),
    hasPart: summary.keyPoints.map((point) => ({ '@type': 'Clip', name: point.text, startOffset: point.startSeconds, url: point.url })),
  };
}

/** Open Graph tags (link previews) and the JSON-LD data block (allowed by the CSP: it is not script). */
function SummaryHead({ summary, video, canonical }: { summary: SummaryObject; video: VideoObject | undefined; canonical: string }): VNode {
  return (
    <>
      <link rel="canonical" href={canonical} />
      <meta property="og:type" content="video.other" />
      <meta property="og:site_name" content="Afterimage" />
      <meta property="og:title" content={summary.videoTitle ?? summary.title ?? summary.videoId} />
      <meta property="og:description" content={summary.tldr ?? ''} />
      <meta property="og:url" content={canonical} />
      <meta property="og:video" content={watchUrl(summary.videoId)} />
      {summary.language ? <meta property="og:locale" content={summary.language} /> : null}
      <script type="application/ld+json" dangerouslySetInnerHTML={{ __html: scriptSafeJson(videoJsonLd(summary, video, canonical)) }} />
    </>
  );
}

function SummaryArticle({ summary, video }: { summary: SummaryObject; video: VideoObject | undefined }): VNode {
  const paragraphs = (summary.detailedSummary ?? '')
    .split(/\n\s*\n/)
    .map((text) => text.trim())
    .filter(Boolean);
  return (
    <article class="summary" lang={summary.language ?? undefined}>
      <p class="crumbs" lang="en">
        <a href="/summaries">Summaries</a> ›{' '}
        <a href={`/summaries?channelId=${summary.channelId}`}>{summary.channelTitle ?? summary.channelId}</a>
      </p>
      <h1>{summary.title}</h1>
      <p class="meta" lang="en">
        {video ? <StatusBadge status={video.status} reason={video.statusReason} /> : null}
        <a href={`/videos/${summary.videoId}`}>
          {summary.videoTitle && summary.videoTitle !== summary.title ? summary.videoTitle : 'The video in the archive'}
        </a>
        <a href={watchUrl(summary.videoId)} rel="external noopener">
          Watch on YouTube
        </a>
      </p>
      <h2>In short</h2>
      <p>{summary.tldr}</p>
      <h2>Key points</h2>
      <ol class="key-points">
        {summary.keyPoints.map((point) => (
          <li>
            <a href={`/videos/${summary.videoId}?t=${point.startSeconds}`}>{clock(point.startSeconds)}</a> {point.text}
          </li>
        ))}
      </ol>
      <h2>Summary</h2>
      {paragraphs.map((text) => (
        <p>{text}</p>
      ))}
      {summary.tags.length ? (
        <p class="tags">
          {summary.tags.map((tag) => (
            <a href={`/summaries?tag=${encodeURIComponent(tag)}`}>#{tag}</a>
          ))}
        </p>
      ) : null}
      <p class="muted" lang="en">
        Written by {summary.llmModel ?? 'an unknown model'}
        {summary.transcript ? ` from the video's ${summary.transcript.kind} subtitles (${languageName(summary.transcript.language)})` : ''}
        {summary.generatedAt ? (
          <>
            , <time dateTime={summary.generatedAt}>{summary.generatedAt.slice(0, 10)}</time>
          </>
        ) : null}
        .
      </p>
    </article>
  );
}

/**
 * `/summaries/:videoId`: a public ready summary, the same for every anonymous visitor (cached 5 minutes
 * by any cache; a signed-in visitor's copy names them in the header and is theirs alone), with Open Graph
 * tags and JSON-LD for link previews and search engines. The query string is ignored: shared links carry
 * tracking parameters.
 */
export const summaryPage = definePage({
  method: 'GET',
  path: '/summaries/:videoId',
  params: videoParams,
  // As the sitemaps (api/routes/summaryPages.ts): a crawler's budget, kept 5 minutes, revalidated by ETag for free.
  requestLimit: 'pageRequestsPerMinute',
  cache: PUBLIC_PAGE_CACHE,
  access: readPublicSummary.access,
  async handler(ctx) {
    const { params, deps, req } = ctx;
    const summary = await perform(readPublicSummary, ctx, params.videoId);
    const [video] = await loadVideos(deps.sql, [params.videoId]);
    const canonical = publicOrigin(deps.config, req) + summaryPageUrl(params.videoId);
    return {
      title: `${summary.videoTitle ?? summary.title} — summary`,
      description: summary.tldr ?? undefined,
      styles: ['summaries.css'],
      modifiedAt: new Date(summary.generatedAt!),
      head: <SummaryHead summary={summary} video={video} canonical={canonical} />,
      body: <SummaryArticle summary={summary} video={video} />,
    };
  },
});
