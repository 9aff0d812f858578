import { ResourceTemplate, type McpServer, type ReadResourceTemplateCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError, notFound } from '../../core/errors.ts';
import { browseSummaries } from '../../core/summaries/browseSummaries.ts';
import { summaryChannels, summaryTags } from '../../core/summaries/summaryFacets.ts';
import { toSummaryListItem } from '../../core/summaries/summaryObject.ts';
import { readSubtitles } from '../../core/subtitles/readSubtitles.ts';
import { timestampedText } from '../../core/subtitles/timestampedText.ts';
import { findChannel } from '../../core/videos/findChannel.ts';
import { perform } from '../http/route.ts';
import { readSummary } from '../actions/summaries.ts';
import { readVideo } from '../actions/videos.ts';
import { guarded, type ChargeUnits, type Guarded } from '../http/guard.ts';
import type { McpContext } from './context.ts';

const LISTED = 50;
const json = (uri: URL, value: unknown): ReadResourceResult => ({
  contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
});
const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) ?? '';

/**
 * A resource read: the guard chain as for a tool; a refusal is a JSON-RPC error (resources have no
 * isError), not-found the spec's -32002.
 */
function guardedRead(
  ctx: McpContext,
  access: Guarded,
  read: (uri: URL, variables: Record<string, string>, charge: ChargeUnits) => Promise<ReadResourceResult>,
): ReadResourceTemplateCallback {
  return async (uri, variables) => {
    try {
      const values = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, one(value)]));
      return await guarded(ctx.deps, ctx.caller, access, ({ charge }) => read(uri, values, charge), { what: `the resource ${uri.href}` });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      throw new McpError(error.code === 'NOT_FOUND' ? -32002 : ErrorCode.InvalidRequest, `${error.code}: ${error.message}`, {
        uri: uri.href,
        code: error.code,
      });
    }
  };
}

export function registerResources(server: McpServer, ctx: McpContext): void {
  const { sql } = ctx.deps;
  server.registerResource(
    'video',
    new ResourceTemplate('tube://video/{videoId}', { list: undefined }),
    { title: 'A video', description: "A stored video's metadata (JSON), as get_video answers it", mimeType: 'application/json' },
    guardedRead(ctx, readVideo.access, async (uri, { videoId }, charge) =>
      json(uri, await perform(readVideo, { ...ctx, charge }, videoId!)),
    ),
  );

  server.registerResource(
    'channel',
    new ResourceTemplate('tube://channel/{channelId}', {
      list: async () => ({
        resources: (await summaryChannels(sql, { offset: 0, limit: LISTED })).rows.map((row) => ({
          uri: `tube://channel/${row.channelId}`,
          name: row.channelTitle ?? row.channelId,
          mimeType: 'application/json',
        })),
      }),
    }),
    {
      title: 'A channel',
      description:
        'A stored channel (JSON) with its counts of stored and deleted videos; listed: the channels with the most public summaries',
      mimeType: 'application/json',
    },
    guardedRead(ctx, { scope: 'L1' }, async (uri, { channelId }) => {
      const channel = await findChannel(sql, channelId!);
      if (!channel) throw notFound(`no channel ${channelId} is stored; search_channel finds it`);
      return json(uri, channel);
    }),
  );

  server.registerResource(
    'subtitles',
    new ResourceTemplate('tube://subtitles/{videoId}', { list: undefined }),
    {
      title: 'Subtitles',
      description: 'A video\'s best subtitle track as timestamped text ("[m:ss] text" lines); counts one subtitleDownloadsPerDay',
      mimeType: 'text/plain',
    },
    guardedRead(
      ctx,
      { scope: 'L1', feature: 'subtitleDownload', charges: ['subtitleDownloadsPerDay'] },
      async (uri, { videoId }, charge) => {
        const { cues } = await readSubtitles(sql, videoId!, {}, async () => void (await charge('subtitleDownloadsPerDay')));
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: timestampedText(cues, 1, Math.max(cues.length, 1)).text }] };
      },
    ),
  );

  server.registerResource(
    'summary',
    new ResourceTemplate('tube://summary/{videoId}', {
      list: async () => ({
        resources: (await browseSummaries(sql, {}, { offset: 0, limit: LISTED })).rows.map(toSummaryListItem).map((summary) => ({
          uri: `tube://summary/${summary.videoId}`,
          name: summary.title ?? summary.videoId,
          mimeType: 'application/json',
        })),
      }),
    }),
    {
      title: 'A summary',
      description: "A video's AI summary (JSON): yours if private, else the public one; listed: the latest public summaries",
      mimeType: 'application/json',
    },
    guardedRead(ctx, readSummary.access, async (uri, { videoId }, charge) =>
      json(uri, await perform(readSummary, { ...ctx, charge }, videoId!)),
    ),
  );

  server.registerResource(
    'tags',
    'tube://tags',
    {
      title: 'Summary tags',
      description: 'The most used tags of public summaries, overall and per language (JSON)',
      mimeType: 'application/json',
    },
    (uri, extra) =>
      guardedRead(ctx, { feature: 'summaries' }, async () => json(uri, await summaryTags(sql, { limit: LISTED })))(uri, {}, extra),
  );
}
