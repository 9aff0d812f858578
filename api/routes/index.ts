import type { Route } from '../http/route.ts';
import { docsRoutes } from './docs.ts';
import { evidenceRoutes } from './evidence.ts';
import { featuresRoute } from './features.ts';
import { feedRoutes } from './feeds.ts';
import { ftsRoute } from './fts.ts';
import { healthRoute } from './health.ts';
import { openApiRoute } from './openapi.ts';
import { protectedResourceRoutes } from './protectedResource.ts';
import { backgroundStatusRoute, continueSearchRoute, startSearchRoute, streamSearchRoute } from './search.ts';
import { stenogramRoutes } from './stenograms.ts';
import { streamTokenRoute } from './streamTokens.ts';
import { subtitleRoutes } from './subtitles.ts';
import { summaryRoutes } from './summaries.ts';
import { summaryPageRoutes } from './summaryPages.ts';
import { listTiersRoute, updateTierRoute } from './tiers.ts';
import { statusHistoryRoute, videoFileRoute, videoThumbnailRoute } from './videos.ts';
import { watchlistRoutes } from './watchlists.ts';
import { watchlistChangeRoutes } from './watchlistChanges.ts';
import { webhookRoutes } from './webhooks.ts';

/** Every route of the API, in the order they are matched. */
export const allRoutes: Route[] = [
  healthRoute,
  featuresRoute,
  listTiersRoute,
  updateTierRoute,
  openApiRoute(() => allRoutes),
  ...docsRoutes,
  ...protectedResourceRoutes,
  startSearchRoute,
  backgroundStatusRoute,
  streamSearchRoute,
  continueSearchRoute,
  ftsRoute,
  ...subtitleRoutes,
  ...summaryRoutes,
  ...summaryPageRoutes,
  ...stenogramRoutes,
  ...watchlistRoutes,
  ...webhookRoutes,
  streamTokenRoute(() => allRoutes),
  statusHistoryRoute,
  ...evidenceRoutes,
  videoFileRoute,
  videoThumbnailRoute,
  ...watchlistChangeRoutes,
  ...feedRoutes,
];
