import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { McpContext } from './context.ts';
import { listPortableTools } from './portableTools.ts';
import { getEvidenceTool } from './tools/evidence.ts';
import { registerPrompts } from './prompts.ts';
import { registerResources } from './resources.ts';
import { registerTool } from './tool.ts';
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
