import type { VNode } from 'preact';
import { z } from 'zod';
import { backgroundStatus, type SearchSession } from '../../../core/crawl/searchSession.ts';
import { notFound } from '../../../core/errors.ts';
import { deletionsByMonth } from '../../../core/status/deletionsByMonth.ts';
import { channelStatusCounts, channelVideos } from '../../../core/videos/channelVideos.ts';
import { findChannel } from '../../../core/videos/findChannel.ts';
import type { ChannelObject } from '../../../core/videos/videoObject.ts';
import { callerUserId, type Caller } from '../../http/guard.ts';
import { wholeNumber } from '../../http/input.ts';
import type { ApiDeps } from '../../http/route.ts';
import { channelIdSchema } from '../../../core/schemas.ts';
import { perform } from '../../http/route.ts';
import { callersSession, continueSearch, followSearch } from '../../actions/search.ts';
import { lastEventId } from '../../sse/writer.ts';
import { FormToken, type FormContext } from '../formToken.tsx';
import { definePage, redirect } from '../page.tsx';
import { VideoCard } from '../videoCard.tsx';
import { STATUS_WORDS } from '../../../core/videos/statusWording.ts';
import { DeletionTimeline } from '../deletionTimeline.tsx';
import { channelDeletionsFeed, FeedLink } from '../feedLink.tsx';
import { WatchButton } from '../watchButton.tsx';
import { watchButtonOf } from '../watchState.ts';

const VIDEOS_PER_PAGE = 24;
/** Past this page the channel's list is better narrowed (the deleted filter) than paged through. */
const MAX_PAGE = 1000;

const channelParams = z.strictObject({ channelId: channelIdSchema });
const sessionId = z.uuid({ message: 'expected a search session id (UUID)' });

const channelUrl = (channelId: string, query: Record<string, string | number | undefined> = {}) => {
  const search = new URLSearchParams(
    Object.entries(query)
      .filter((entry): entry is [string, string | number] => entry[1] !== undefined && entry[1] !== '')
      .map(([name, value]) => [name, String(value)]),
  );
  return `/channels/${channelId}${search.size ? `?${search}` : ''}`;
};

/** The visitor's session of this channel (another's, or another channel's, is as unknown as a missing one). */
async function sessionOfChannel(deps: ApiDeps, visitor: Caller, channelId: string, id: string): Promise<SearchSession> {
  const session = await callersSession(deps.sql, visitor, id);
  if (session.channelId !== channelId) throw notFound(`no search session ${id} of channel ${channelId}`);
  return session;
}

/** The session the page follows: the one in the address when it is the visitor's, else the visitor's session of a running crawl. */
async function followedSession(deps: ApiDeps, visitor: Caller, channelId: string, given: string | undefined) {
  if (given) {
    const session = await sessionOfChannel(deps, visitor, channelId, given).catch(() => undefined);
    return { session, unknown: !session };
  }
  const running = await backgroundStatus(deps.sql, channelId, callerUserId(visitor));
  const session = running.sessionId
    ? await sessionOfChannel(deps, visitor, channelId, running.sessionId).catch(() => undefined)
    : undefined;
  return { session, unknown: false, crawlRunning: running.running };
}

function ChannelFacts({ channel, counts }: { channel: ChannelObject; counts: Awaited<ReturnType<typeof channelStatusCounts>> }): VNode {
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <span class={`badge ${channel.channelStatus}`}>{channel.channelStatus === 'live' ? 'Live' : 'Deleted'}</span>
      </dd>
      {channel.handle ? (
        <>
          <dt>Handle</dt>
          <dd>{channel.handle}</dd>
        </>
      ) : null}
      {channel.aliases.length ? (
        <>
          <dt>Former names</dt>
          <dd>{channel.aliases.join(', ')}</dd>
        </>
      ) : null}
      <dt>Videos kept</dt>
      <dd id="kept-counts">
        {counts.live} live · {counts.deleted} deleted · {counts.reuploaded} re-uploaded
        {counts.checking ? ` · ${counts.checking} being checked` : ''}
      </dd>
      <dt>On YouTube</dt>
      <dd>
        <a href={channel.channelUrl} rel="noopener noreferrer">
          {channel.channelUrl.replace('https://www.', '')}
        </a>
      </dd>
    </dl>
  );
}

/** "Load more from the archives": the next page of archive look-ups, as a new session of the visitor's. */
function ContinueForm({ ctx, channelId, session }: { ctx: FormContext; channelId: string; session: string }): VNode {
  const action = `/channels/${channelId}/continue`;
  return (
    <form method="post" action={action} class="continue">
      <FormToken ctx={ctx} action={action} />
      <input type="hidden" name="session" value={session} />
      <button type="submit" class="secondary">
        Load more from the archives
      </button>
      <span class="muted"> Looks for older videos in archived copies of the channel's pages (counts as a channel search).</span>
    </form>
  );
}

function Pager({
  channelId,
  page,
  pages,
  show,
  session,
}: {
  channelId: string;
  page: number;
  pages: number;
  show: string;
  session: string | undefined;
}): VNode | null {
  if (pages <= 1) return null;
  const query = (to: number) => ({ show: show === 'deleted' ? show : undefined, session, page: to > 1 ? to : undefined });
  return (
    <nav class="pager" aria-label="Pages of videos">
      {page > 1 ? (
        <a href={channelUrl(channelId, query(page - 1))} rel="prev">
          ← Newer
        </a>
      ) : (
        <span />
      )}
      <span class="muted">
        Page {page} of {pages}
      </span>
      {page < pages ? (
        <a href={channelUrl(channelId, query(page + 1))} rel="next">
          Older →
        </a>
      ) : (
        <span />
      )}
    </nav>
  );
}

/** `/channels/:channelId`: the channel, its videos (arriving live while a crawl of the visitor's runs), deletions by month. */
export const channelPage = definePage({
  method: 'GET',
  path: '/channels/:channelId',
  params: channelParams,
  query: z.object({
    session: sessionId.optional(),
    show: z.enum(['all', 'deleted'], { message: 'expected all or deleted' }).default('all'),
    page: wholeNumber('page', 1, MAX_PAGE, 1),
  }),
  async handler(ctx) {
    const { deps, visitor, params, query } = ctx;
    const { channelId } = params;
    const channel = await findChannel(deps.sql, channelId);
    if (!channel) throw notFound(`channel ${channelId} is not in the archive yet; search for it to find its videos`);
    const goneOnly = query.show === 'deleted';
    const [counts, months, listed, followed, watch] = await Promise.all([
      channelStatusCounts(deps.sql, channelId),
      deletionsByMonth(deps.sql, channelId),
      channelVideos(deps.sql, { channelId, goneOnly, offset: (query.page - 1) * VIDEOS_PER_PAGE, limit: VIDEOS_PER_PAGE }),
      followedSession(deps, visitor, channelId, query.session),
      watchButtonOf(ctx, { kind: 'channel', channelId }),
    ]);
    const session = followed.session;
    const following = session && !session.crawlFinished && query.page === 1;
    const pages = Math.max(1, Math.ceil(listed.total / VIDEOS_PER_PAGE));
    const here = channelUrl(channelId, {
      show: goneOnly ? 'deleted' : undefined,
      session: session?.id,
      page: query.page > 1 ? query.page : undefined,
    });
    return {
      title: channel.channelTitle || channelId,
      description: `${channel.channelTitle}: ${channel.storedVideos} videos kept, ${channel.deletedVideos} of them deleted.`,
      styles: ['facts.css', 'channel.css'],
      head: <FeedLink href={channelDeletionsFeed(channelId)} title={`Confirmed deletions of ${channel.channelTitle || channelId}`} />,
      scripts: following ? ['channel.js'] : [],
      body: (
        <article class="channel">
          <h1>{channel.channelTitle || channelId}</h1>
          <WatchButton {...watch} />
          <ChannelFacts channel={channel} counts={counts} />
          {followed.unknown ? (
            <p class="notice">That search is not one of yours (or has ended long ago): the page shows what the archive holds.</p>
          ) : null}
          {following ? (
            <div
              class="crawl notice"
              data-live={`/channels/${channelId}/live?session=${session.id}`}
              data-filter={query.show}
              data-kept={counts.live + counts.deleted + counts.reuploaded + counts.checking}
              data-all={`${channelUrl(channelId, { show: goneOnly ? 'deleted' : undefined })}#videos`}
              data-status-words={JSON.stringify(STATUS_WORDS)}
            >
              <p id="crawl-status" role="status" aria-live="polite">
                A search of this channel is running: {listed.total} videos kept so far. New videos appear below as they are found.
              </p>
              <p>
                <a href={here}>Refresh</a> to see the newest state.
              </p>
            </div>
          ) : session ? (
            <p class="notice">
              The search of this channel has finished. <a href={here}>Refresh</a>
            </p>
          ) : followed.crawlRunning ? (
            <p class="notice">
              A search of this channel is running; <a href={here}>refresh</a> to see what it has found.
            </p>
          ) : null}

          <h2 id="deletions">Deletions by month</h2>
          <DeletionTimeline channelTitle={channel.channelTitle} months={months} />
          <p class="muted">
            <a href={channelDeletionsFeed(channelId)}>Feed of this channel's deletions</a> (Atom, for a feed reader).
          </p>

          <h2 id="videos">Videos</h2>
          <form class="filters" method="get" action={`/channels/${channelId}#videos`}>
            <div class="field">
              <label for="show">Show</label>
              <select id="show" name="show">
                <option value="all" selected={!goneOnly}>
                  All videos
                </option>
                <option value="deleted" selected={goneOnly}>
                  Only deleted videos
                </option>
              </select>
            </div>
            {session ? <input type="hidden" name="session" value={session.id} /> : null}
            <button type="submit">Apply</button>
          </form>
          <p class="muted" id="videos-count">
            {listed.total} {goneOnly ? 'deleted ' : ''}video{listed.total === 1 ? '' : 's'}
          </p>
          <ul class="cards" id="videos-list">
            {listed.videos.map((video) => (
              <VideoCard key={video.videoId} video={video} />
            ))}
          </ul>
          {listed.total === 0 ? (
            <p id="videos-empty">
              {goneOnly ? 'No video of this channel is known to be deleted.' : 'No video of this channel is kept yet.'}
            </p>
          ) : null}
          <Pager channelId={channelId} page={query.page} pages={pages} show={query.show} session={session?.id} />
          {session ? (
            <ContinueForm ctx={ctx} channelId={channelId} session={session.id} />
          ) : (
            <p>
              <a href={`/search?q=${encodeURIComponent(channel.channelUrl)}`}>Search this channel again</a> to find videos added since.
            </p>
          )}
        </article>
      ),
    };
  },
});

/** `/channels/:channelId/live?session=…`: the search's stream, as GET /api/search/:sessionId/stream sends it, to this visitor. */
export const channelLivePage = definePage({
  method: 'GET',
  path: '/channels/:channelId/live',
  params: channelParams,
  query: z.object({ session: sessionId, lastEventId: z.string().max(64).optional() }),
  access: followSearch.access,
  async handler(ctx) {
    const { req, res, deps, visitor, params, query } = ctx;
    const session = await sessionOfChannel(deps, visitor, params.channelId, query.session);
    return perform(followSearch, ctx, { res, session, resumeFrom: lastEventId(req, query.lastEventId) });
  },
});

/** "Load more from the archives": POST /api/search/:sessionId/continue for the visitor, then the channel page following the new session. */
export const channelContinuePage = definePage({
  method: 'POST',
  path: '/channels/:channelId/continue',
  params: channelParams,
  form: z.object({ session: sessionId }),
  access: continueSearch.access,
  async handler(ctx) {
    const { deps, visitor, params, form } = ctx;
    const session = await sessionOfChannel(deps, visitor, params.channelId, form.session);
    const started = await perform(continueSearch, ctx, session);
    return redirect(channelUrl(params.channelId, { session: started.sessionId }));
  },
});
