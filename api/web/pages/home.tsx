import { definePage } from '../page.tsx';

/** `/`: one search box for channels, videos and words said or written. */
export const homePage = definePage({
  method: 'GET',
  path: '/',
  async handler() {
    return {
      title: 'Search the archive',
      description: 'Search YouTube channels and videos, deleted ones included: titles, descriptions, subtitles and summaries.',
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
        </section>
      ),
    };
  },
});
