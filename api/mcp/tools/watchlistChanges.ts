import { z } from 'zod';
import { changeList, changesCursor, CHANGES_PER_PAGE, listWatchlistChanges } from '../../actions/watchlistChanges.ts';
import { perform } from '../../http/route.ts';
import { defineTool } from '../tool.ts';

export const watchlistChangesTool = defineTool({
  name: 'watchlist_changes',
  title: "A watchlist's changes",
  description:
    "Your watchlist's changes, newest first: deletions confirmed (with reason, claimant, previous status, evidence), re-uploads, restorations, title/description/tag/thumbnail changes, new uploads of watched channels and new matches of saved queries. Pass nextCursor as cursor for older ones. Free.",
  input: z.object({
    watchlistId: z.string().max(64),
    cursor: changesCursor.optional(),
    limit: z.number().int().min(1).max(CHANGES_PER_PAGE.max).default(CHANGES_PER_PAGE.default),
  }),
  output: changeList,
  access: listWatchlistChanges.access,
  readOnly: true,
  async run(args, ctx) {
    const data = await perform(listWatchlistChanges, ctx, args);
    const lines = data.items.map((change) => `- #${change.id} ${change.recordedAt} ${change.type} ${change.videoId} ${change.title ?? ''}`);
    const more = data.nextCursor ? `\nolder: cursor ${data.nextCursor}` : '';
    return { data, text: `${data.items.length} changes, newest first\n${lines.join('\n')}${more}` };
  },
});
