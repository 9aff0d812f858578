import { z } from 'zod';
import { storedVideos } from '../../../core/crawl/searchSession.ts';
import { ftsSort, MAX_RESULT_WINDOW } from '../../../core/fts/backend.ts';
import { MAX_QUERY_LENGTH } from '../../../core/fts/query.ts';
import { highlightHtml, type Highlight } from '../../../core/fts/highlight.ts';
import { ftsResults, presentResults } from '../../../core/fts/searchVideos.ts';
import { videoObject } from '../../../core/videos/videoObject.ts';
import { perform } from '../../http/route.ts';
import { searchText } from '../../actions/fts.ts';
import { startSearch } from '../../actions/search.ts';
import { defineTool } from '../tool.ts';

export const searchChannelTool = defineTool({
  name: 'search_channel',
  title: 'Search a channel',
  description:
    'Starts (or joins) a background crawl of a YouTube channel, deleted videos included, and answers what is stored now: the channel, how many of its videos are stored, the newest of them, and the search session id (its live events stream at sseEndpointUrl). Call again later, or use search_videos, to see what the crawl added. query: @handle, a channel URL or UC… id, or a video URL/id (resolves to its channel). Counts one channelSearchesPerHour.',
  input: z.object({
    query: z.string().min(1).max(2048).describe('@handle, youtube.com/@handle, /channel/UC…, a UC… id, or a video URL or id'),
    limit: z.number().int().min(0).max(200).default(50).describe('how many of the stored videos to list, newest first'),
  }),
  output: z.object({
    searchSessionId: z.string(),
    sseEndpointUrl: z.string(),
    channelId: z.string(),
    channelTitle: z.string().nullable(),
    joinedRunningCrawl: z.boolean().describe('true: a crawl of this channel was already running and this search joined it'),
    storedVideos: z.number().int().describe('videos of the channel stored now (the crawl adds more in the background)'),
    videos: z.array(videoObject).describe('the newest stored videos'),
  }),
  access: startSearch.access,
  readOnly: false,
  async run(args, ctx) {
    const started = await perform(startSearch, ctx, args.query);
    const stored = await storedVideos(ctx.deps.sql, started.channelId, args.limit);
    const data = {
      searchSessionId: started.sessionId,
      sseEndpointUrl: `/api/search/${started.sessionId}/stream`,
      channelId: started.channelId,
      channelTitle: started.channelTitle,
      joinedRunningCrawl: started.joined,
      storedVideos: stored.total,
      videos: stored.videos,
    };
    const lines = stored.videos.map(
      (video) => `- ${video.videoId} ${video.uploadDate ?? '????-??-??'} [${video.status}] ${video.title ?? '(no title)'}`,
    );
    const text = `Channel ${data.channelTitle ?? data.channelId} (${data.channelId}): ${stored.total} videos stored now; a crawl is ${started.joined ? 'already running (joined)' : 'started'} (session ${started.sessionId}).\n${lines.join('\n')}`;
    return { data, text };
  },
});

/** A highlight in the text for a model: each match between asterisks (the HTML is for data's readers). */
const starred = (highlight: Highlight) => highlight.map(({ text, marked }) => (marked ? `*${text}*` : text)).join('');

export const searchVideosTool = defineTool({
  name: 'search_videos',
  title: 'Full-text search of videos',
  description:
    'Searches the titles, tags and descriptions of every stored video, or with in="subtitles" what was said in them (up to 3 matching cues per video with their times and a link to that second). q: every word must match; "an exact phrase"; -word excludes; a OR b. Filters: status (live, deleted: also re-uploaded), hasVideo, hasSubtitles, hasSummary. Highlights are HTML with <mark>. Counts one ftsQueriesPerMinute.',
  input: z.object({
    q: z.string().min(1).max(MAX_QUERY_LENGTH).describe('the query'),
    page: z.number().int().min(1).max(MAX_RESULT_WINDOW).default(1),
    pageSize: z.number().int().min(1).max(100).default(20),
    status: z.enum(['live', 'deleted']).optional(),
    hasVideo: z.boolean().optional(),
    hasSubtitles: z.boolean().optional(),
    hasSummary: z.boolean().optional(),
    sort: ftsSort.default('relevance'),
    in: z.enum(['videos', 'subtitles']).default('videos').describe('videos: titles, tags, descriptions; subtitles: what was said'),
  }),
  output: ftsResults,
  access: searchText.access,
  readOnly: true,
  async run(args, ctx) {
    const found = await perform(searchText, ctx, args);
    const data = presentResults(found, highlightHtml);
    const lines = data.videos.map((video, index) => {
      const cues = (found.hits[index]!.cues ?? []).map((cue) => `\n    ${cue.url} ${starred(cue.text)}`).join('');
      return `- ${video.videoId} ${video.uploadDate ?? '????-??-??'} [${video.status}] ${video.title ?? '(no title)'} — ${video.channelTitle ?? video.channelId}${cues}`;
    });
    const text = `${data.total}${data.totalExact ? '' : '+'} videos match (page ${data.page} of ${data.totalPages})${data.suggestion ? `; did you mean: ${data.suggestion}` : ''}\n${lines.join('\n')}`;
    return { data, text };
  },
});
