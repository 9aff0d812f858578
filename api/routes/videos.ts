import { videoParams } from '../../core/schemas.ts';
import { statusHistory, statusHistorySchema } from '../../core/status/statusHistory.ts';
import { defineRoute } from '../http/route.ts';

export const statusHistoryRoute = defineRoute({
  method: 'GET',
  path: '/api/videos/:videoId/status-history',
  tag: 'Video status',
  summary: "A video's current status and every change of it, oldest first",
  description:
    'status: checking (not verified yet), live, deleted, re-uploaded (deleted, with its content under another id: reuploadedAs). A deletion is recorded only after two probes, spaced in time, agree; transient answers never change a status.',
  auth: 'key',
  scope: 'L1',
  feature: 'statusHistory',
  params: videoParams,
  response: statusHistorySchema,
  errors: ['NOT_FOUND'],
  async handler({ params, deps }) {
    return statusHistory(deps.sql, params.videoId);
  },
});
