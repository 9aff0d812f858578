import { perform } from '../../http/route.ts';
import { browseSummaries } from '../../actions/summaries.ts';
import { definePage } from '../page.tsx';
import { SummaryCards } from '../summaryCards.tsx';

/** Summaries shown under the search box: the newest public ones. */
const LATEST = 5;

/** `/`: one search box for channels, videos and words said or written, and the latest public summaries. */
export const homePage = definePage({
  method: 'GET',
  path: '/',
  async handler(ctx) {
    const latest = ctx.visitor.tier.features.summaries ? (await perform(browseSummaries, ctx, { page: 1, limit: LATEST })).items : [];
    return {
      title: 'Search the archive',
      description: 'Search YouTube channels and videos, deleted ones included: titles, descriptions, subtitles and summaries.',
      styles: ['summaries.css'],
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
          <p class="muted">
            Examples: <a href="/search?q=%40veritasium">@veritasium</a> · <a href="/search?q=%22climate+change%22">"climate change"</a> ·{' '}
            <a href="/search?q=interview&amp;status=deleted">deleted interviews</a>
          </p>
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
