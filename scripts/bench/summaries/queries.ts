import type { Sql } from '../../../core/db/database.ts';
import { browseSummaries, type BrowseFilters } from '../../../core/summaries/browseSummaries.ts';
import { summaryChannels, summaryLanguages, summaryTags } from '../../../core/summaries/summaryFacets.ts';
import { DEEP_PAGES, PAGE_SIZE, SUMMARIES } from './shape.ts';

interface Variant {
  browse?: { filters: BrowseFilters; page: number };
  path: string;
  describe: string;
}
interface QueryClass {
  id: string;
  label: string;
  /** Judged against the p95 target (browse, latest, tags). */
  judged: boolean;
  variants: Variant[];
  inProcess(sql: Sql, variant: Variant): Promise<{ ids: string[]; total: number | null; privateShown: number }>;
}

const browseCall = async (sql: Sql, variant: Variant) => {
  const { filters, page } = variant.browse!;
  const { rows, total } = await browseSummaries(sql, filters, { offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE });
  return {
    ids: rows.map((row) => row.video_id),
    total,
    privateShown: rows.filter((row) => row.private || row.status !== 'generated').length,
  };
};

const browseVariant = (filters: BrowseFilters, page = 1): Variant => {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (filters.tag !== undefined) params.set('tag', filters.tag);
  if (filters.channelId !== undefined) params.set('channelId', filters.channelId);
  if (filters.language !== undefined) params.set('language', filters.language);
  if (page > 1) params.set('page', String(page));
  return {
    browse: { filters, page },
    path: `/api/summary/browse?${params}`,
    describe: `${JSON.stringify(filters)}${page > 1 ? ` page ${page}` : ''}`,
  };
};

export async function queryClasses(sql: Sql): Promise<QueryClass[]> {
  const tagRows = await sql<
    { value: string; count: number }[]
  >`select value, count from summary_facets where facet = 'tag' and language = '' order by count desc, value`;
  const common = tagRows.slice(0, 5);
  const mid = tagRows.filter((row) => row.count >= SUMMARIES * 0.004 && row.count <= SUMMARIES * 0.01).slice(0, 5);
  const rare = tagRows
    .filter((row) => row.count >= 5 && row.count <= 30)
    .filter((_, i) => i % 97 === 0)
    .slice(0, 8);
  const channels = await sql<
    { value: string; count: number }[]
  >`select value, count from summary_facets where facet = 'channel' order by count desc, value`;
  const spreadChannels = Array.from({ length: 12 }, (_, i) => channels[Math.floor((i * (channels.length - 1)) / 11)]!).filter(Boolean);
  const languages = await sql<
    { value: string; count: number }[]
  >`select value, count from summary_facets where facet = 'language' order by count desc`;
  // A popular tag of each language other than the biggest, with that language.
  const tagLanguage = await sql<{ value: string; language: string; count: number }[]>`
    select distinct on (language) value, language, count from summary_facets
    where facet = 'tag' and language <> '' and language <> ${languages[0]!.value}
    order by language, count desc, value`;
  // A channel with a tag or a language: the channel's most used tag, the channel's own language and another one.
  const channelMixes = await sql<{ channelId: string; tag: string; language: string; otherLanguage: string }[]>`
    select c.channel_id as "channelId",
      (select e.tag from summary_list_entries e where e.channel_id = c.channel_id and e.tag <> '' group by 1 order by count(*) desc, 1 limit 1) as tag,
      (select e.language from summary_list_entries e where e.channel_id = c.channel_id and e.tag = '' group by 1 order by count(*) desc, 1 limit 1) as language,
      (select l.value from summary_facets l where l.facet = 'language' and l.language = '' order by l.count, l.value limit 1) as "otherLanguage"
    from unnest(${spreadChannels.slice(0, 6).map((c) => c.value)}::text[]) as c(channel_id)`;
  const single = (
    id: string,
    label: string,
    path: string,
    call: (sql: Sql) => Promise<{ ids: string[]; total: number | null; privateShown: number }>,
    judged: boolean,
  ): QueryClass => ({
    id,
    label,
    judged,
    variants: [{ path, describe: path }],
    inProcess: (pool) => call(pool),
  });
  const classes: QueryClass[] = [
    { id: 'browse-all', label: 'browse, no filter (page 1)', judged: true, variants: [browseVariant({})], inProcess: browseCall },
    {
      id: 'browse-tag-common',
      label: `browse by common tag (${common.map((t) => `${t.value} ${t.count}`).join(', ')})`,
      judged: true,
      variants: common.map((t) => browseVariant({ tag: t.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-tag-mid',
      label: `browse by mid-frequency tag (${mid.map((t) => t.count).join(', ')} summaries)`,
      judged: true,
      variants: mid.map((t) => browseVariant({ tag: t.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-tag-rare',
      label: `browse by rare tag (${rare.map((t) => t.count).join(', ')} summaries)`,
      judged: true,
      variants: rare.map((t) => browseVariant({ tag: t.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-channel',
      label: `browse by channel (${spreadChannels.length} channels, ${spreadChannels.at(-1)?.count}-${spreadChannels[0]?.count} summaries)`,
      judged: true,
      variants: spreadChannels.map((c) => browseVariant({ channelId: c.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-language',
      label: `browse by language (${languages.map((l) => `${l.value} ${l.count}`).join(', ')})`,
      judged: true,
      variants: languages.map((l) => browseVariant({ language: l.value })),
      inProcess: browseCall,
    },
    {
      id: 'browse-tag-language',
      label: `browse by tag + language (${tagLanguage.map((t) => `${t.language}:${t.value} ${t.count}`).join(', ')})`,
      judged: true,
      variants: tagLanguage.map((t) => browseVariant({ tag: t.value, language: t.language })),
      inProcess: browseCall,
    },
    {
      id: 'browse-tag-channel',
      label: `browse by tag + channel (each channel's most used tag, ${channelMixes.length} channels)`,
      judged: true,
      variants: channelMixes.map((c) => browseVariant({ tag: c.tag, channelId: c.channelId })),
      inProcess: browseCall,
    },
    {
      id: 'browse-channel-language',
      label: `browse by channel + language (the channel's own and the rarest language, ${channelMixes.length} channels)`,
      judged: true,
      variants: channelMixes.flatMap((c) =>
        [c.language, c.otherLanguage].map((language) => browseVariant({ channelId: c.channelId, language })),
      ),
      inProcess: browseCall,
    },
    {
      id: 'browse-tag-channel-language',
      label: `browse by tag + channel + language (each channel's most used tag in its own and the rarest language)`,
      judged: true,
      variants: channelMixes.flatMap((c) =>
        [c.language, c.otherLanguage].map((language) => browseVariant({ tag: c.tag, channelId: c.channelId, language })),
      ),
      inProcess: browseCall,
    },
    {
      id: 'browse-tag-deep',
      label: `browse by common tag, deep pages (${DEEP_PAGES.join(', ')} of ${PAGE_SIZE}, ${common
        .slice(0, 2)
        .map((t) => t.value)
        .join(', ')})`,
      judged: true,
      variants: common.slice(0, 2).flatMap((t) => DEEP_PAGES.map((page) => browseVariant({ tag: t.value }, page))),
      inProcess: browseCall,
    },
    {
      id: 'browse-deep',
      label: `browse, no filter, deep pages (${DEEP_PAGES.join(', ')} of ${PAGE_SIZE})`,
      judged: true,
      variants: DEEP_PAGES.map((page) => browseVariant({}, page)),
      inProcess: browseCall,
    },
    single(
      'latest',
      `latest (${PAGE_SIZE})`,
      `/api/summary/latest?limit=${PAGE_SIZE}`,
      async (pool) => {
        const { rows } = await browseSummaries(pool, {}, { offset: 0, limit: PAGE_SIZE });
        return {
          ids: rows.map((row) => row.video_id),
          total: null,
          privateShown: rows.filter((row) => row.private || row.status !== 'generated').length,
        };
      },
      true,
    ),
    single(
      'tags',
      'summaryTags (50 per list, every language)',
      '/api/summary/tags',
      async (pool) => {
        const { tags: list, languages: byLanguage } = await summaryTags(pool, { limit: 50 });
        return { ids: list.map((t) => t.tag), total: byLanguage.length, privateShown: 0 };
      },
      true,
    ),
    single(
      'languages',
      'summaryLanguages',
      '/api/summary/languages',
      async (pool) => {
        const list = await summaryLanguages(pool);
        return { ids: list.map((l) => l.language), total: list.length, privateShown: 0 };
      },
      false,
    ),
    single(
      'channels',
      'summaryChannels (page 1 of 50)',
      '/api/summary/channels',
      async (pool) => {
        const { rows, total } = await summaryChannels(pool, { offset: 0, limit: 50 });
        return { ids: rows.map((r) => r.channelId), total, privateShown: 0 };
      },
      false,
    ),
  ];
  // A small test build may have no tag in some frequency band.
  return classes.filter((query) => query.variants.length > 0);
}
