import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, type GetPromptResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import { guarded } from '../http/guard.ts';
import type { McpContext } from './context.ts';
import { getEvidenceTool } from './tools/evidence.ts';
import { registerResources } from './resources.ts';
import { listPortableTools, registerTool } from './tool.ts';
import { searchChannelTool, searchVideosTool } from './tools/search.ts';
import { generateStenogramTool } from './tools/stenograms.ts';
import { browseSummariesTool, generateSummaryTool, getSummaryTool } from './tools/summaries.ts';
import { getUsageTool } from './tools/usage.ts';
import { getSubtitlesTool, getVideoTool, statusHistoryTool } from './tools/videos.ts';
import {
  addToWatchlistTool,
  createWatchlistTool,
  deleteWatchlistTool,
  getWatchlistTool,
  listWatchlistsTool,
  removeFromWatchlistTool,
} from './tools/watchlists.ts';
import { watchlistChangesTool } from './tools/watchlistChanges.ts';
import { listWebhooksTool, testWebhookTool, webhookDeliveriesTool } from './tools/webhooks.ts';

/** Every tool, in the order tools/list shows them. */
const mcpTools = [
  searchChannelTool,
  searchVideosTool,
  getVideoTool,
  getSubtitlesTool,
  getSummaryTool,
  generateSummaryTool,
  browseSummariesTool,
  statusHistoryTool,
  getEvidenceTool,
  getUsageTool,
  generateStenogramTool,
  listWatchlistsTool,
  getWatchlistTool,
  createWatchlistTool,
  addToWatchlistTool,
  removeFromWatchlistTool,
  deleteWatchlistTool,
  watchlistChangesTool,
  listWebhooksTool,
  webhookDeliveriesTool,
  testWebhookTool,
];

const INSTRUCTIONS =
  'Afterimage archives YouTube channels: video metadata (deleted videos included), status history, subtitles, AI summaries and private stenograms. ' +
  'Start with search_channel (a channel) or search_videos (a topic; in="subtitles" searches what was said). To be told of deletions and changes, keep watchlists (create_watchlist, add_to_watchlist): each has a private Atom feed. Quota refusals come back as tool errors naming the limit and its reset time: report them, do not retry at once.';

/** The MCP server of one request, for one caller (stateless: built per request, see api/mcp/handler.ts). */
export function createMcpServer(ctx: McpContext): McpServer {
  const server = new McpServer(
    { name: 'afterimage', title: 'Afterimage', version: ctx.deps.version },
    { instructions: INSTRUCTIONS, capabilities: { tools: {}, resources: {}, prompts: {} } },
  );
  for (const tool of mcpTools) registerTool(server, tool, ctx);
  listPortableTools(server, mcpTools);
  registerResources(server, ctx);
  registerPrompts(server, ctx);
  return server;
}

const ask = (text: string): GetPromptResult => ({ messages: [{ role: 'user', content: { type: 'text', text } }] });

/** Prompts: ready-made research tasks that name the tools to use, in order. */
function registerPrompts(server: McpServer, ctx: McpContext): void {
  // prompts/get passes the guard chain like a tool call (one requestsPerMinute); a refusal is a JSON-RPC error.
  const guardedPrompt =
    <A>(name: string, build: (args: A) => GetPromptResult) =>
    async (args: A): Promise<GetPromptResult> => {
      try {
        return await guarded(ctx.deps, ctx.caller, {}, async () => build(args), { what: `the prompt ${name}` });
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        throw new McpError(ErrorCode.InvalidRequest, `${error.code}: ${error.message}`, { code: error.code });
      }
    };
  server.registerPrompt(
    'research_video',
    {
      title: 'Research a video',
      description: 'What a video says, what happened to it, and the answer to a question about it, with timestamps',
      argsSchema: {
        videoId: z.string().describe('the 11-character video id'),
        question: z.string().optional().describe('what you want to know (default: what the video says)'),
      },
    },
    guardedPrompt('research_video', ({ videoId, question }: { videoId: string; question?: string | undefined }) =>
      ask(`Research the YouTube video ${videoId} with the Afterimage tools.
1. Call get_video with videoId "${videoId}" for its title, channel, dates and status.
2. If its status is deleted or re-uploaded, call get_video_status_history and say when and why it went away (and where it lives now, if re-uploaded).
3. Call get_summary. If there is none, call generate_summary (it waits for the result when you pass a progress token); if it answers TRANSCRIPT_REQUIRED, say that subtitles are being fetched.
4. Call get_subtitles (page through with page when totalPages > 1) to check the details against what was actually said.
Then ${question ? `answer this question: ${question}` : 'summarise what the video says'}. Quote the moments you rely on as [m:ss] with a https://www.youtube.com/watch?v=${videoId}&t=<seconds>s link. If a tool answers RATE_LIMITED, say which limit and when it resets instead of retrying.`),
    ),
  );

  server.registerPrompt(
    'channel_overview',
    {
      title: 'Channel overview',
      description: 'An overview of a channel: what it publishes, what was deleted, and what its summaries say',
      argsSchema: { channel: z.string().describe('@handle, channel URL, UC… id, or one of its video URLs') },
    },
    guardedPrompt('channel_overview', ({ channel }: { channel: string }) =>
      ask(`Give an overview of the YouTube channel ${channel} with the Afterimage tools.
1. Call search_channel with query "${channel}": it starts (or joins) a crawl and lists what is stored now. Note the channelId.
2. Call browse_summaries with that channelId for what its videos are about; use their tags for the main topics.
3. Call search_videos with q set to the channel's main topics and status "deleted" to find deleted or re-uploaded videos; for a few of them call get_video_status_history for the reason.
4. Call get_usage if a tool answers RATE_LIMITED, and say what remains.
Write: what the channel publishes (topics, typical length, active years), its most notable videos, and what has been deleted and why. Give video ids with every claim.`),
    ),
  );

  server.registerPrompt(
    'find_deleted',
    {
      title: 'Find deleted videos',
      description: 'Deleted and re-uploaded videos about a topic (or of a channel), with why they went away',
      argsSchema: {
        topic: z.string().describe('words to search for'),
        channel: z.string().optional().describe('limit to this channel (@handle, URL or UC… id)'),
      },
    },
    guardedPrompt('find_deleted', ({ topic, channel }: { topic: string; channel?: string | undefined }) =>
      ask(`Find deleted YouTube videos about "${topic}"${channel ? ` on the channel ${channel}` : ''} with the Afterimage tools.
${channel ? `1. Call search_channel with query "${channel}" so its videos are stored (and note its channelId).\n` : ''}${channel ? '2' : '1'}. Call search_videos with q "${topic}" and status "deleted"; call it again with in "subtitles" to find videos that talk about it without naming it in the title.${channel ? ' Keep only videos of that channel.' : ''}
${channel ? '3' : '2'}. For each hit call get_video_status_history: report when it was deleted, the reason (copyright with its claimant, private, terms of service…) and the re-upload id when there is one.
${channel ? '4' : '3'}. For the most relevant ones call get_summary (or get_subtitles) to say what they contained.
Answer as a table: video id, title, deleted on, reason, re-uploaded as, what it was about.`),
    ),
  );
}
