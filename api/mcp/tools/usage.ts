import { z } from 'zod';
import { usageReportSchema } from '../../../core/usage/usageReport.ts';
import { perform } from '../../http/route.ts';
import { readUsage } from '../../actions/usage.ts';
import { defineTool } from '../tool.ts';

export const getUsageTool = defineTool({
  name: 'get_usage',
  title: 'Usage and limits',
  description:
    'Your tier, feature flags, and for every limit (requestsPerMinute, channelSearchesPerHour, ftsQueriesPerMinute, subtitleDownloadsPerDay, summaryGenerationsPerDay, apiStenogramsPerDay, pageRequestsPerMinute) its maximum, use, what remains and when it resets; for every allowance (watchlists, watchlistItems, webhooks: what you may hold at once) its maximum, what you hold and what remains. limitsEnforced is false for an administrator, whose use is counted but never refused.',
  input: z.object({}),
  output: usageReportSchema,
  access: readUsage.access,
  readOnly: true,
  async run(_args, ctx) {
    const data = await perform(readUsage, ctx, undefined);
    const lines = Object.entries(data.limits).map(
      ([name, limit]) =>
        `- ${name}: ${limit.used} of ${limit.max ?? 'unlimited'} used, ${limit.remaining ?? 'unlimited'} left, resets in ${limit.resetSeconds} s`,
    );
    const held = Object.entries(data.allowances).map(
      ([name, allowance]) =>
        `- ${name}: ${allowance.held} held of ${allowance.max ?? 'unlimited'}, ${allowance.remaining ?? 'unlimited'} more allowed`,
    );
    const exempt = data.limitsEnforced ? '' : ' (administrator: counted, never refused)';
    return {
      data,
      text: `Tier ${data.tier.displayName}${exempt}, key scope ${data.account?.keyScope ?? '?'}\n${[...lines, ...held].join('\n')}`,
    };
  },
});
