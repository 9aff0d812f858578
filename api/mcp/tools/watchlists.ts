import { z } from 'zod';
import {
  watchlistItemSchema,
  watchlistSchema,
  watchlistSummarySchema,
  type Watchlist,
  type WatchlistItem,
} from '../../../core/watchlists/watchlists.ts';
import {
  addWatchlistItem,
  createWatchlist,
  deleteWatchlist,
  listWatchlists,
  newWatchlistInput,
  readWatchlist,
  removeWatchlistItem,
  toNewItem,
  watchlistItemInput,
} from '../../actions/watchlists.ts';
import { perform } from '../../http/route.ts';
import { defineTool } from '../tool.ts';

const watchlistId = z.string().min(1).max(100).describe("the watchlist's id (list_watchlists)");
const deleted = z.object({ id: z.string(), deleted: z.literal(true) });

const describeItem = (item: WatchlistItem) =>
  `- ${item.kind} ${item.channelId ?? item.videoId ?? ''}${item.kind === 'query' ? '' : ' '}"${item.label}"${item.query?.in === 'subtitles' ? ' (in subtitles)' : ''} [item ${item.id}]`;

const describeWatchlist = (watchlist: Watchlist) =>
  [
    `Watchlist "${watchlist.name}" (${watchlist.id}): ${watchlist.counts.items} items. Private Atom feed: ${watchlist.feedUrl}`,
    ...watchlist.items.map(describeItem),
  ].join('\n');

export const listWatchlistsTool = defineTool({
  name: 'list_watchlists',
  title: 'Your watchlists',
  description: 'Your watchlists, newest first: id, name, how many items each watches, and its private Atom feed URL.',
  input: z.object({}),
  output: z.object({ watchlists: z.array(watchlistSummarySchema) }),
  access: listWatchlists.access,
  readOnly: true,
  async run(_args, ctx) {
    const watchlists = await perform(listWatchlists, ctx, { origin: ctx.origin });
    return {
      data: { watchlists },
      text: watchlists.length
        ? watchlists.map((w) => `- "${w.name}" (${w.id}): ${w.itemCount} items`).join('\n')
        : 'You have no watchlists; create_watchlist makes one.',
    };
  },
});

export const getWatchlistTool = defineTool({
  name: 'get_watchlist',
  title: 'A watchlist',
  description: 'One of your watchlists with every channel, video and saved query it watches (newest first), and its private Atom feed URL.',
  input: z.object({ watchlistId }),
  output: watchlistSchema,
  access: readWatchlist.access,
  readOnly: true,
  async run(args, ctx) {
    const data = await perform(readWatchlist, ctx, { origin: ctx.origin, id: args.watchlistId });
    return { data, text: describeWatchlist(data) };
  },
});

export const createWatchlistTool = defineTool({
  name: 'create_watchlist',
  title: 'Create a watchlist',
  description:
    'A new, empty watchlist (the same as POST /api/watchlists). Your tier caps how many you keep (the watchlists allowance of get_usage): past it, a FORBIDDEN error says so.',
  input: newWatchlistInput,
  output: watchlistSchema,
  access: createWatchlist.access,
  readOnly: false,
  async run(args, ctx) {
    const data = await perform(createWatchlist, ctx, { origin: ctx.origin, name: args.name });
    return { data, text: describeWatchlist(data) };
  },
});

export const addToWatchlistTool = defineTool({
  name: 'add_to_watchlist',
  title: 'Watch something',
  description:
    'Adds to a watchlist (the same as POST /api/watchlists/{id}/items): a channel {kind: "channel", channelId} (crawled now if never crawled here), a video stored here {kind: "video", videoId} (search its channel first otherwise), or a saved full-text query {kind: "query", q, in?, status?, hasVideo?, hasSubtitles?, hasSummary?} as search_videos takes it. Something already watched there is answered as it is (created: false). The tier caps the items over all your watchlists (watchlistItems).',
  input: z.object({ watchlistId, item: watchlistItemInput }),
  output: z.object({ item: watchlistItemSchema, created: z.boolean().describe('false: it was watched there already') }),
  access: addWatchlistItem.access,
  readOnly: false,
  async run(args, ctx) {
    const data = await perform(addWatchlistItem, ctx, { id: args.watchlistId, item: toNewItem(args.item) });
    return { data, text: `${data.created ? 'Now watching' : 'Already watched'}:\n${describeItem(data.item)}` };
  },
});

export const removeFromWatchlistTool = defineTool({
  name: 'remove_from_watchlist',
  title: 'Stop watching something',
  description: 'Removes one item (its id from get_watchlist) from a watchlist.',
  input: z.object({ watchlistId, itemId: z.string().min(1).max(100).describe("the item's id (get_watchlist)") }),
  output: deleted,
  access: removeWatchlistItem.access,
  readOnly: false,
  destructive: true,
  async run(args, ctx) {
    const data = await perform(removeWatchlistItem, ctx, { id: args.watchlistId, itemId: args.itemId });
    return { data, text: `Item ${data.id} removed.` };
  },
});

export const deleteWatchlistTool = defineTool({
  name: 'delete_watchlist',
  title: 'Delete a watchlist',
  description: 'Deletes a watchlist for good, with its items, webhooks and feed.',
  input: z.object({ watchlistId }),
  output: deleted,
  access: deleteWatchlist.access,
  readOnly: false,
  destructive: true,
  async run(args, ctx) {
    const data = await perform(deleteWatchlist, ctx, { id: args.watchlistId });
    return { data, text: `Watchlist ${data.id} deleted.` };
  },
});
