import type { VNode } from 'preact';
import { z } from 'zod';
import { summaryChannels, summaryLanguages, summaryTags } from '../../../core/summaries/summaryFacets.ts';
import { perform } from '../../http/route.ts';
import { browseQuery, browseSummaries } from '../../actions/summaries.ts';
import { queryHref, withoutBlanks } from '../formQuery.ts';
import { FoldedFilters } from '../foldedFilters.tsx';
import { definePage } from '../page.tsx';
import { Pager } from '../pager.tsx';
import { languageName, SummaryCards } from '../summaryCards.tsx';

type BrowseQuery = z.output<typeof browseQuery>;

/** Channels offered in the filter, and tags shown as links: the most used. */
const CHANNEL_CHOICES = 100;
const TAG_LINKS = 30;

const browseHref = (query: BrowseQuery, changes: Partial<BrowseQuery>) =>
  queryHref('/summaries', { ...query, ...changes }, { page: 1, limit: 20 });

type Facets = {
  languages: Awaited<ReturnType<typeof summaryLanguages>>;
  channels: Awaited<ReturnType<typeof summaryChannels>>['rows'];
  tags: Awaited<ReturnType<typeof summaryTags>>['tags'];
};

/** The filters as a GET form (works without JavaScript). */
function FilterForm({ query, facets }: { query: BrowseQuery; facets: Facets }): VNode {
  return (
    <form class="filters summary-filters" method="get" action="/summaries">
      <div class="field">
        <label for="browse-tag">Tag</label>
        <input id="browse-tag" name="tag" type="text" value={query.tag ?? ''} maxLength={40} />
      </div>
      <div class="field">
        <label for="browse-language">Language</label>
        <select id="browse-language" name="language">
          <option value="">Any</option>
          {facets.languages.map(({ language, count }) => (
            <option value={language} selected={language === query.language}>
              {languageName(language)} ({count.toLocaleString('en')})
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="browse-channel">Channel</label>
        <select id="browse-channel" name="channelId">
          <option value="">Any</option>
          {facets.channels.map(({ channelId, channelTitle, summaries }) => (
            <option value={channelId} selected={channelId === query.channelId}>
              {channelTitle ?? channelId} ({summaries.toLocaleString('en')})
            </option>
          ))}
        </select>
      </div>
      <button type="submit">Show</button>
    </form>
  );
}

/** What the list is, in words: "Summaries tagged lathe, in English". */
function heading(query: BrowseQuery, channelTitle: string | undefined): string {
  const parts = [
    query.tag ? `tagged ${query.tag}` : null,
    query.language ? `in ${languageName(query.language)}` : null,
    query.channelId ? `from ${channelTitle ?? query.channelId}` : null,
  ].filter(Boolean);
  return parts.length ? `Summaries ${parts.join(', ')}` : 'Latest summaries';
}

/** `/summaries`: public summaries, newest first, by tag, language and channel (GET /api/summary/browse's functions). */
export const summariesPage = definePage({
  method: 'GET',
  path: '/summaries',
  access: browseSummaries.access,
  query: z.preprocess(withoutBlanks, browseQuery),
  async handler(ctx) {
    const { query, deps } = ctx;
    const [list, languages, channels, tags] = await Promise.all([
      perform(browseSummaries, ctx, query),
      summaryLanguages(deps.sql),
      summaryChannels(deps.sql, { offset: 0, limit: CHANNEL_CHOICES }),
      summaryTags(deps.sql, { limit: TAG_LINKS, ...(query.language ? { language: query.language } : {}) }),
    ]);
    const facets: Facets = { languages, channels: channels.rows, tags: tags.tags };
    const channelTitle =
      channels.rows.find((channel) => channel.channelId === query.channelId)?.channelTitle ?? list.items[0]?.channelTitle ?? undefined;
    const title = heading(query, channelTitle);
    const filtered = Boolean(query.tag || query.language || query.channelId);
    return {
      title,
      description: 'AI summaries of YouTube videos, deleted ones included, by tag, language and channel.',
      styles: ['summaries.css'],
      body: (
        <div class="browse">
          <div class="browse-main">
            <h1>{title}</h1>
            <FoldedFilters label="Filters">
              <FilterForm query={query} facets={facets} />
            </FoldedFilters>
            <p class="muted" aria-live="polite">
              {list.total.toLocaleString('en')} summar{list.total === 1 ? 'y' : 'ies'}
              {filtered ? (
                <>
                  {' '}
                  · <a href="/summaries">show all</a>
                </>
              ) : null}
            </p>
            {list.items.length ? <SummaryCards items={list.items} /> : <p>No public summary matches these filters.</p>}
            <Pager page={list.page} totalPages={list.totalPages} href={(page) => browseHref(query, { page })} label="Summary pages" />
          </div>
          <aside class="facets" aria-label="Browse by">
            <h2>Tags{query.language ? ` in ${languageName(query.language)}` : ''}</h2>
            <ul class="tag-cloud">
              {facets.tags.map(({ tag, count }) => (
                <li>
                  <a href={browseHref(query, { tag, page: 1 })} aria-current={tag === query.tag ? 'true' : undefined}>
                    #{tag}
                  </a>{' '}
                  <span class="muted">{count}</span>
                </li>
              ))}
            </ul>
            <h2>Languages</h2>
            <ul>
              {languages.map(({ language, count }) => (
                <li>
                  <a href={browseHref(query, { language, page: 1 })} aria-current={language === query.language ? 'true' : undefined}>
                    {languageName(language)}
                  </a>{' '}
                  <span class="muted">{count}</span>
                </li>
              ))}
            </ul>
            <h2>Channels</h2>
            <ul>
              {channels.rows.slice(0, 10).map(({ channelId, channelTitle: name, summaries }) => (
                <li>
                  <a href={browseHref(query, { channelId, page: 1 })} aria-current={channelId === query.channelId ? 'true' : undefined}>
                    {name ?? channelId}
                  </a>{' '}
                  <span class="muted">{summaries}</span>
                </li>
              ))}
            </ul>
          </aside>
        </div>
      ),
    };
  },
});
