import type { VNode } from 'preact';
import { z } from 'zod';
import { FTS_SORTS, type FtsSort } from '../../../core/fts/backend.ts';
import { presentResults, type FoundPage } from '../../../core/fts/searchVideos.ts';
import { clock } from '../../../core/text/clock.ts';
import { loadVideos } from '../../../core/videos/loadVideos.ts';
import { parseChannelQuery } from '../../../core/youtube/channelQuery.ts';
import { wholeNumber } from '../../http/input.ts';
import { ftsQuery, searchText } from '../../actions/fts.ts';
import { perform } from '../../http/route.ts';
import { startSearch } from '../../actions/search.ts';
import { queryHref, withoutBlanks } from '../formQuery.ts';
import { FoldedFilters } from '../foldedFilters.tsx';
import { Highlighted } from '../highlighted.tsx';
import { definePage, redirect, type PageContext } from '../page.tsx';
import { Pager } from '../pager.tsx';
import { deletedOn, StatusBadge } from '../statusBadge.tsx';
import { CURRENT_CUE_ID } from './video.tsx';
import { LIST_THUMBNAIL, Thumbnail } from '../videoCard.tsx';
import { DELETIONS_FEED, FeedLink } from '../feedLink.tsx';
import { WatchButton } from '../watchButton.tsx';
import { watchButtonOf } from '../watchState.ts';

/** GET /api/fts's fields; q may be left out (the form alone), and a page shows 20 results. */
const searchQuery = z.preprocess(
  withoutBlanks,
  ftsQuery.extend({ q: ftsQuery.shape.q.optional(), pageSize: wholeNumber('pageSize', 1, 100, 20) }),
);
type SearchQuery = z.output<typeof searchQuery>;
type Results = ReturnType<typeof resultsToShow>;
type Result = Results['videos'][number];

/** The page found, its highlights kept in parts for Highlighted to render. */
const resultsToShow = (found: FoundPage) => presentResults(found, (parts) => parts);

const SORT_TEXT: Record<FtsSort, string> = {
  relevance: 'Best match',
  'date-desc': 'Newest first',
  'date-asc': 'Oldest first',
  'duration-desc': 'Longest first',
  'duration-asc': 'Shortest first',
};
const FLAGS = [
  ['hasVideo', 'Archived video'],
  ['hasSubtitles', 'Subtitles'],
  ['hasSummary', 'Summary'],
] as const;

/** This search with some fields changed, as a link. */
const searchHref = (query: SearchQuery, changes: Partial<Record<keyof SearchQuery, string | number | boolean | undefined>>) =>
  queryHref('/search', { ...query, ...changes }, { page: 1, pageSize: 20, sort: 'relevance', in: 'videos' });

const flagValue = (value: boolean | undefined) => (value === undefined ? '' : String(value));

function Choice({ name, label, value, options }: { name: string; label: string; value: string; options: Array<[string, string]> }): VNode {
  return (
    <div class="field">
      <label for={`search-${name}`}>{label}</label>
      <select id={`search-${name}`} name={name}>
        {options.map(([option, text]) => (
          <option value={option} selected={option === value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The search form: every control a real field of a GET form, so it works without JavaScript. */
function SearchForm({ query }: { query: SearchQuery }): VNode {
  const either: Array<[string, string]> = [
    ['', 'Either'],
    ['true', 'Yes'],
    ['false', 'No'],
  ];
  return (
    <form class="search-page" method="get" action="/search" role="search">
      <div class="field query">
        <label for="search-q">Words, a channel (@handle or URL) or a video (URL or id)</label>
        <div class="row">
          <input id="search-q" name="q" type="search" value={query.q ?? ''} autoComplete="off" />
          <button type="submit">Search</button>
        </div>
      </div>
      <FoldedFilters label="Filters and order" open={!query.q}>
        <fieldset class="filters">
          <legend>Filters and order</legend>
          <Choice
            name="in"
            label="Search in"
            value={query.in}
            options={[
              ['videos', 'Titles, tags, descriptions'],
              ['subtitles', 'Subtitles (what is said)'],
            ]}
          />
          <Choice
            name="status"
            label="Status"
            value={query.status ?? ''}
            options={[
              ['', 'Any'],
              ['live', 'Live'],
              ['deleted', 'Deleted or re-uploaded'],
            ]}
          />
          {FLAGS.map(([name, label]) => (
            <Choice name={name} label={label} value={flagValue(query[name])} options={either} />
          ))}
          <Choice name="sort" label="Order" value={query.sort} options={FTS_SORTS.map((sort) => [sort, SORT_TEXT[sort]])} />
          <button type="submit" class="secondary">
            Apply
          </button>
        </fieldset>
      </FoldedFilters>
    </form>
  );
}

const momentHref = (videoId: string, startMs: number) => `/videos/${videoId}?t=${Math.floor(startMs / 1000)}#${CURRENT_CUE_ID}`;

function ResultCard({ video }: { video: Result }): VNode {
  const facts = [
    video.uploadDate ? `uploaded ${video.uploadDate}` : null,
    video.duration !== null ? `duration ${clock(video.duration)}` : null,
    video.viewCount !== null ? `${video.viewCount.toLocaleString('en')} views` : null,
    video.hasVideo ? 'archived video' : null,
    video.hasSubtitles ? 'subtitles' : null,
    video.hasSummary ? 'summary' : null,
  ].filter((fact): fact is string => fact !== null);
  return (
    <li class="card result">
      <Thumbnail video={video} {...LIST_THUMBNAIL} />
      <h3>
        <a href={`/videos/${video.videoId}`}>
          {video.highlight.title !== null ? <Highlighted highlight={video.highlight.title} /> : `Untitled video ${video.videoId}`}
        </a>
      </h3>
      <p class="meta">
        <StatusBadge status={video.status} reason={video.statusReason} /> {deletedOn(video)}{' '}
        {video.reuploadedAs ? (
          <a class="fact" href={`/videos/${video.reuploadedAs}`}>
            its re-upload
          </a>
        ) : null}{' '}
        <a href={`/channels/${video.channelId}`}>{video.channelTitle ?? video.channelId}</a>
        {facts.map((fact) => (
          <span class="fact">{fact}</span>
        ))}
      </p>
      {video.highlight.description ? (
        <p class="excerpt">
          <Highlighted highlight={video.highlight.description} />
        </p>
      ) : null}
      {video.cues?.length ? (
        <ul class="cues" aria-label={`Where it is said (${video.cueMatches} line${video.cueMatches === 1 ? '' : 's'})`}>
          {video.cues.map((cue) => (
            <li>
              <a href={momentHref(video.videoId, cue.startMs)}>{clock(cue.startMs / 1000)}</a> <Highlighted highlight={cue.text} />
            </li>
          ))}
          {(video.cueMatches ?? 0) > video.cues.length ? (
            <li class="muted">and {(video.cueMatches ?? 0) - video.cues.length} more</li>
          ) : null}
        </ul>
      ) : null}
    </li>
  );
}

function ResultList({ query, results }: { query: SearchQuery; results: Results }): VNode {
  const count = `${results.totalExact ? '' : 'About '}${results.total.toLocaleString('en')} video${results.total === 1 ? '' : 's'}`;
  return (
    <section aria-labelledby="results-heading">
      <h2 id="results-heading">{results.total === 0 ? 'Nothing found' : count}</h2>
      {results.suggestion ? (
        <p class="notice did-you-mean">
          Did you mean <a href={searchHref(query, { q: results.suggestion, page: undefined })}>{results.suggestion}</a>?
        </p>
      ) : null}
      {results.total === 0 && !results.suggestion ? (
        <p class="muted">No stored video matches. Try fewer words, other filters, or search the subtitles.</p>
      ) : null}
      {results.total > 0 && results.videos.length === 0 ? (
        <p class="muted">
          This page is past the last result; <a href={searchHref(query, { page: undefined })}>go to the first page</a>.
        </p>
      ) : null}
      <ol class="cards results">
        {results.videos.map((video) => (
          <ResultCard key={video.videoId} video={video} />
        ))}
      </ol>
      <Pager page={results.page} totalPages={results.totalPages} href={(page) => searchHref(query, { page })} label="Result pages" />
    </section>
  );
}

/**
 * What the box holds, when it is not words: a video URL (or the id of a stored video: an 11-letter word
 * such as "programming" is searched for as words otherwise) goes to the video's page; a channel starts or
 * joins its search, as POST /api/search does, and goes to the channel's page following that session.
 */
async function reference(ctx: PageContext<unknown, unknown, unknown>, text: string) {
  const parsed = parseChannelQuery(text);
  if (!parsed) return undefined;
  if (parsed.kind === 'video') {
    const bareId = parsed.videoId === text.trim();
    if (bareId && (await loadVideos(ctx.deps.sql, [parsed.videoId])).length === 0) return undefined;
    return redirect(`/videos/${parsed.videoId}`);
  }
  const started = await perform(startSearch, ctx, text);
  return redirect(`/channels/${started.channelId}?session=${started.sessionId}`);
}

const deletionsFeed = <FeedLink href={DELETIONS_FEED} title="Confirmed deletions" />;

/** `/search?q=…`: full-text results with GET /api/fts's filters, sorts and paging, or a channel or video to go to. */
export const searchPage = definePage({
  method: 'GET',
  path: '/search',
  query: searchQuery,
  // Words are a full-text query, a channel starts its search: as GET /api/fts and POST /api/search charge.
  charges: [...searchText.access.charges, ...startSearch.access.charges],
  async handler(ctx) {
    const { query } = ctx;
    const title = query.q ? `${query.q} — search` : 'Search';
    const form = <SearchForm query={query} />;
    if (!query.q)
      return {
        title,
        styles: ['search.css'],
        head: deletionsFeed,
        headerSearch: false,
        body: (
          <>
            <h1>Search the archive</h1>
            {form}
          </>
        ),
      };
    const goTo = await reference(ctx, query.q);
    if (goTo) return goTo;
    const results = resultsToShow(await perform(searchText, ctx, { ...query, q: query.q }));
    const { q, in: where, status, hasVideo, hasSubtitles, hasSummary } = query;
    const watch = await watchButtonOf(ctx, { kind: 'query', query: { q, in: where, status, hasVideo, hasSubtitles, hasSummary } });
    return {
      title,
      styles: ['search.css'],
      head: deletionsFeed,
      headerSearch: false,
      description: `Videos matching ${query.q}, deleted ones included.`,
      body: (
        <>
          <h1>
            Search: <span class="query-text">{query.q}</span>
          </h1>
          {form}
          <WatchButton {...watch} />
          <ResultList query={query} results={results} />
        </>
      ),
    };
  },
});
