import { perform } from '../../http/route.ts';
import { browseSummaries } from '../../actions/summaries.ts';
import { definePage } from '../page.tsx';
import { recentSearchExamples, type SearchExamples } from '../../../core/videos/searchExamples.ts';
import { SummaryCards } from '../summaryCards.tsx';
import { DELETIONS_FEED, FeedLink } from '../feedLink.tsx';

/** Summaries shown under the search box: the newest public ones. */
const LATEST = 5;

const searchHref = (q: string, filters = '') => `/search?q=${encodeURIComponent(q)}${filters}`;

/** Examples taken from the archive's own channels and titles, or what to do when it holds nothing yet. */
function Examples({ examples }: { examples: SearchExamples }) {
  const links = [
    examples.channel && <a href={`/channels/${examples.channel.channelId}`}>{examples.channel.handle}</a>,
    examples.word && <a href={searchHref(examples.word)}>{examples.word}</a>,
    examples.deletedWord && <a href={searchHref(examples.deletedWord, '&status=deleted')}>deleted videos about “{examples.deletedWord}”</a>,
  ].filter(Boolean);
  if (links.length === 0)
    return <p class="muted">The archive is empty: search for a channel by its @handle or URL to archive its videos.</p>;
  return (
    <p class="muted search-examples">
      Examples:{' '}
      {links.map((link, index) => (
        <>
          {index ? ' · ' : ''}
          {link}
        </>
      ))}
    </p>
  );
}

/** `/`: one search box for channels, videos and words said or written, and the latest public summaries. */
export const homePage = definePage({
  method: 'GET',
  path: '/',
  async handler(ctx) {
    const examples = await recentSearchExamples(ctx.deps.sql);
    const latest = ctx.visitor.tier.features.summaries ? (await perform(browseSummaries, ctx, { page: 1, limit: LATEST })).items : [];
    return {
      title: 'Search the archive',
      description: 'Search YouTube channels and videos, deleted ones included: titles, descriptions, subtitles and summaries.',
      styles: ['summaries.css'],
      head: <FeedLink href={DELETIONS_FEED} title="Confirmed deletions" />,
      headerSearch: false,
      body: (
        <section class="home">
          <h1>Search the archive</h1>
          <form class="search big" role="search" method="get" action="/search">
            <label for="home-q">A channel (@handle or URL), a video (URL or id), or words to find in titles and subtitles</label>
            <div class="row">
              <input id="home-q" name="q" type="search" required autoComplete="off" placeholder="@channel, https://youtu.be/…, or words" />
              <button type="submit">Search</button>
            </div>
          </form>
          <Examples examples={examples} />
          {latest.length ? (
            <section aria-labelledby="latest-heading">
              <h2 id="latest-heading">Latest summaries</h2>
              <SummaryCards items={latest} />
              <p>
                <a href="/summaries">All summaries, by tag, language and channel</a>
              </p>
            </section>
          ) : null}
        </section>
      ),
    };
  },
});
