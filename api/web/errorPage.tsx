import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import type { TierCache } from '../../core/tiers/loadTiers.ts';
import { failureOf, type Failure } from '../http/failure.ts';
import { durationInWords, whenInWords } from './duration.ts';
import { Layout, type Account } from './layout.tsx';
import { renderDocument, sendHtml } from './render.ts';

const HEADINGS: Record<number, string> = {
  400: 'That request could not be understood',
  401: 'Please sign in',
  403: 'Not available to you',
  404: 'Not found',
  405: 'Not possible here',
  408: 'The request took too long',
  409: 'Not possible right now',
  429: 'Too many requests',
  500: 'Something went wrong',
  503: 'Temporarily unavailable',
};

/** A person asked (a browser navigating), not a program: an error outside /api and /mcp becomes a page. */
export function wantsHtml(req: IncomingMessage & { path?: string }): boolean {
  const path = req.path ?? req.url ?? '/';
  if (path.startsWith('/api/') || path === '/api' || path.startsWith('/mcp')) return false;
  return (req.headers.accept ?? '').includes('text/html');
}

const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.');

export async function tiersWith(tiers: TierCache, feature: unknown): Promise<string[]> {
  if (typeof feature !== 'string') return [];
  const all = await tiers.get().catch(() => new Map());
  return [...all.values()].filter((tier) => tier.features[feature]).map((tier) => tier.displayName as string);
}

/** Where a person can raise their limits: only an anonymous visitor of a site where anyone may sign up is told to. */
function HigherLimits({ signedIn, registrationOpen }: { signedIn: boolean; registrationOpen: boolean }) {
  if (signedIn || !registrationOpen) return null;
  return (
    <p>
      Accounts have higher limits: <a href="/login">sign in</a> or <a href="/register">create one</a>.
    </p>
  );
}

function Advice({ failure, allowedIn }: { failure: Failure; allowedIn: string[] }) {
  const retryAfter = Number(failure.headers?.['Retry-After']);
  if (failure.status === 429 && retryAfter > 0) return <p>Try again {whenInWords(retryAfter)}.</p>;
  if (failure.status === 403 && allowedIn.length)
    return (
      <p>
        Available in the {allowedIn.join(', ')} tier{allowedIn.length > 1 ? 's' : ''}.
      </p>
    );
  if (failure.status === 503 && retryAfter > 0) return <p>Try again in {durationInWords(retryAfter)}.</p>;
  return null;
}

/** The words of a refused search (its path /search and its q), to put back in the search box. */
const searchedWords = (req: IncomingMessage & { path?: string; query?: Record<string, unknown> }) =>
  req.path === '/search' && typeof req.query?.q === 'string' ? req.query.q : undefined;

/** A search box holding the words of the refused search (and where they were looked for), to send again later. */
function SearchAgain({ q, where }: { q: string; where: unknown }) {
  return (
    <form method="get" action="/search" role="search" class="inline-form">
      <label for="search-again">Your search</label>
      <input id="search-again" name="q" type="search" value={q} />
      {where === 'subtitles' ? <input type="hidden" name="in" value="subtitles" /> : null}
      <button type="submit">Search again</button>
    </form>
  );
}

/** An error as a page in the site's layout, with its status and headers (Retry-After, Allow). */
export async function sendErrorPage(
  req: IncomingMessage & { id?: string; path?: string; query?: Record<string, unknown> },
  res: ServerResponse,
  error: unknown,
  deps: { tiers: TierCache; log: Logger; config: Pick<Config, 'REGISTRATION'> },
  account?: Account,
): Promise<void> {
  const failure = failureOf(error, req, deps.log);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const allowedIn =
    failure.code === 'FEATURE_DISABLED' ? await tiersWith(deps.tiers, (failure.details as { feature?: unknown } | undefined)?.feature) : [];
  const heading = HEADINGS[failure.status] ?? 'Something went wrong';
  const words = searchedWords(req);
  const page = (
    <Layout title={heading} account={account}>
      <h1>{heading}</h1>
      <div class="error-box" role="alert">
        <p>{sentence(failure.message)}</p>
        <Advice failure={failure} allowedIn={allowedIn} />
        {failure.status === 429 ? (
          <HigherLimits signedIn={account !== undefined} registrationOpen={deps.config.REGISTRATION === 'open'} />
        ) : null}
      </div>
      {words === undefined ? null : <SearchAgain q={words} where={req.query?.in} />}
      <p>
        <a href="/">Search the archive</a> · <a href="/summaries">Browse summaries</a>
      </p>
      {req.id ? <p class="muted">Request id {req.id}</p> : null}
    </Layout>
  );
  sendHtml(res, failure.status, renderDocument(page), { ...failure.headers, 'Cache-Control': 'no-store' });
}
