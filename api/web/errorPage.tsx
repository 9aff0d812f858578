import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/log.ts';
import type { TierCache } from '../../core/tiers/loadTiers.ts';
import { failureOf, type Failure } from '../http/failure.ts';
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

function Advice({ failure, allowedIn }: { failure: Failure; allowedIn: string[] }) {
  const retryAfter = Number(failure.headers?.['Retry-After']);
  if (failure.status === 429 && retryAfter > 0) {
    const at = new Date(Date.now() + retryAfter * 1000).toISOString().slice(11, 16);
    return (
      <p>
        Try again in {retryAfter} seconds (at {at} UTC). Signing in raises your limits.
      </p>
    );
  }
  if (failure.status === 403 && allowedIn.length)
    return (
      <p>
        Available in the {allowedIn.join(', ')} tier{allowedIn.length > 1 ? 's' : ''}.
      </p>
    );
  if (failure.status === 503 && retryAfter > 0) return <p>Try again in {retryAfter} seconds.</p>;
  return null;
}

/** An error as a page in the site's layout, with its status and headers (Retry-After, Allow). */
export async function sendErrorPage(
  req: IncomingMessage & { id?: string },
  res: ServerResponse,
  error: unknown,
  deps: { tiers: TierCache; log: Logger },
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
  const page = (
    <Layout title={heading} account={account}>
      <h1>{heading}</h1>
      <div class="error-box" role="alert">
        <p>{sentence(failure.message)}</p>
        <Advice failure={failure} allowedIn={allowedIn} />
      </div>
      <p>
        <a href="/">Search the archive</a> · <a href="/summaries">Browse summaries</a>
      </p>
      {req.id ? <p class="muted">Request id {req.id}</p> : null}
    </Layout>
  );
  sendHtml(res, failure.status, renderDocument(page), { ...failure.headers, 'Cache-Control': 'no-store' });
}
