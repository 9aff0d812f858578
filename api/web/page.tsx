import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ComponentChildren } from 'preact';
import { z } from 'zod';
import type { Logger } from '../../core/log.ts';
import { type Caller, guarded, type Access, type ChargeUnits, type GuardedRequest, type RequestLimit } from '../http/guard.ts';
import { readFormBody, readMultipartBody, parseInput, parseQuery } from '../http/input.ts';
import { checkFormToken, CSRF_FIELD } from '../http/csrf.ts';
import { PAGE_CALLER_HEADERS, privateByDefault, sendAnswer } from '../http/representation.ts';
import { handled, perform, privateCache, type Action, type ApiDeps, type CachePolicy, type Exchange } from '../http/route.ts';
import { videoParams, type LimitName } from '../../core/schemas.ts';
import { lastEventId } from '../sse/writer.ts';
import { sendErrorPage } from './errorPage.tsx';
import { Layout, type LayoutProps } from './layout.tsx';
import { HTML_TYPE, PAGE_HEADERS, PRIVATE_PAGE, renderDocument } from './render.ts';
import { accountOf, identifyVisitor } from './visitor.ts';

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;
type PageRequest = IncomingMessage & { id: string; path: string; params: Record<string, string>; query: Record<string, unknown> };

export interface PageContext<P, Q, F> {
  req: PageRequest;
  res: ServerResponse;
  deps: ApiDeps;
  /** The visitor as the API would see them: tiers, quotas and privacy apply unchanged. */
  visitor: Caller;
  /** The visitor again, by the name actions take (a page context is an action's context: `perform(action, ctx, input)`). */
  caller: Caller;
  params: P;
  query: Q;
  /** A POST page's form fields, validated. */
  form: F;
  /** An upload page's files (multipart/form-data), by field name: in memory only. */
  files: Record<string, Buffer>;
  /** For a page that answers with a file of its own (sendFile, a subtitle download): counts the request as it is sent, or not for a 304. */
  exchange: Exchange;
  /** Counts units of a limit the page declares in `charges`, with the request, in one statement (api/http/guard.ts). */
  charge: ChargeUnits;
  log: Logger;
}

/** A page to render in the site's layout (title, head, scripts as Layout takes them). */
export interface PageView extends Omit<LayoutProps, 'account' | 'children'> {
  body: ComponentChildren;
  status?: number;
  headers?: Record<string, string>;
  /** When what the page shows last changed: Last-Modified, and If-Modified-Since answered (a page with `cache`). */
  modifiedAt?: Date | undefined;
}

const redirectTag = Symbol('redirect');
export interface Redirect {
  [redirectTag]: true;
  location: string;
  status: 302 | 303;
}
/** After a form: 303 See Other, so reloading the next page never posts the form again. */
export const redirect = (location: string, status: 302 | 303 = 303): Redirect => ({ [redirectTag]: true, location, status });
const isRedirect = (value: unknown): value is Redirect => typeof value === 'object' && value !== null && redirectTag in value;

/** One page of the web app: its path, its validated input and what it shows; not part of the OpenAPI document. */
export interface Page<
  P extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  F extends Schema | undefined = Schema | undefined,
> {
  method: 'GET' | 'POST';
  path: string;
  params?: P;
  query?: Q;
  form?: F;
  /** What the visitor's tier must allow (as a route's `feature`); an action's access, with the limits it charges, fits here. */
  access?: Access & { charges?: readonly LimitName[] | undefined };
  /** A POST page whose form uploads files (multipart/form-data) of at most this many bytes in all. */
  upload?: { maxBytes: number };
  /** Counted against the visitor's requestsPerMinute (default true), as an API request is. */
  rateLimited?: boolean;
  /** The limit that counts its requests instead of requestsPerMinute (public pages: pageRequestsPerMinute, sized for crawlers). */
  requestLimit?: RequestLimit;
  /** The limits its handler may charge (ctx.charge), as a route's `charges`. */
  charges?: readonly LimitName[];
  /**
   * Who may keep the page: `public` ones are the same for every anonymous visitor and carry an ETag, so a
   * revalidation is a 304 that counts nothing; a signed-in visitor gets them with their own header,
   * `private, no-cache`, and every page varies on Cookie, so no cache hands one copy to the other.
   * Without it, `private, no-cache`.
   */
  cache?: CachePolicy;
  /**
   * What the page shows, where it goes next, or `handled` when it wrote the response itself: a live
   * stream or a file, served by the same functions as the API's route for it, to this visitor.
   */
  handler(ctx: PageContext<Out<P>, Out<Q>, Out<F>>): Promise<PageView | Redirect | typeof handled>;
}

export const definePage = <
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  F extends Schema | undefined = undefined,
>(
  page: Page<P, Q, F>,
): Page => page as unknown as Page;

/**
 * A POST page's fields, refused (403) unless they carry the CSRF token FormToken put in a form of this
 * page (api/http/csrf.ts): checked here, for every form that changes something, so no page can forget it.
 */
async function checkedForm(
  req: PageRequest,
  deps: ApiDeps,
  upload: Page['upload'],
): Promise<{ fields: Record<string, string>; files: Record<string, Buffer> }> {
  const { fields: sent, files } = upload
    ? await readMultipartBody(req, upload.maxBytes)
    : { fields: await readFormBody(req, deps.config.BODY_LIMIT_BYTES), files: {} };
  const { [CSRF_FIELD]: token, ...fields } = sent;
  checkFormToken(req, deps.config, req.path, token);
  return { fields, files };
}

/** Identify the visitor, then the API's guard chain (access, the charge) around validation and rendering, answered as pages. */
export function servePage(page: Page, deps: ApiDeps) {
  return async (req: PageRequest, res: ServerResponse) => {
    let visitor: Caller | undefined;
    privateByDefault(res, PAGE_CALLER_HEADERS);
    try {
      visitor = await identifyVisitor(deps, req);
      const rules = {
        ...page.access,
        rateLimited: page.rateLimited,
        requestLimit: page.requestLimit,
        charges: page.charges ?? page.access?.charges,
      };
      await guarded(deps, visitor, rules, (request) => render(page, deps, req, res, visitor!, request), {
        what: 'this page',
        res,
        countsLate: page.cache !== undefined,
      });
    } catch (error) {
      await sendErrorPage(req, res, error, deps, visitor && accountOf(visitor));
    }
  };
}

/** Validation, the handler, and its answer: the page in the layout, a redirect, or what the handler wrote. */
async function render(page: Page, deps: ApiDeps, req: PageRequest, res: ServerResponse, visitor: Caller, request: GuardedRequest) {
  const params = page.params && parseInput(page.params, req.params, 'path');
  const query = page.query && parseQuery(page.query, req.query);
  // Every POST's CSRF token is checked, whether or not the page reads fields.
  const posted = page.method === 'POST' ? await checkedForm(req, deps, page.upload) : undefined;
  const form = posted && page.form && parseInput(page.form, posted.fields, 'form');
  const exchange = { req, res, countRequest: request.countRequest, waiveRequest: request.waiveRequest };
  const log = deps.log.child({ reqId: req.id });
  const answer = await page.handler({
    req,
    res,
    deps,
    visitor,
    caller: visitor,
    params,
    query,
    form,
    files: posted?.files ?? {},
    exchange,
    charge: request.charge,
    log,
  });
  if (answer === handled) return;
  if (isRedirect(answer)) {
    await request.countRequest();
    res.writeHead(answer.status, { Location: answer.location, 'Content-Length': 0 });
    res.end();
    return;
  }
  const { body, status, headers, modifiedAt, ...layout } = answer;
  // The header names who is signed in: that copy of a page everybody may keep is theirs alone.
  const cache = page.cache && visitor.kind !== 'anonymous' ? privateCache : page.cache;
  const html = renderDocument(
    <Layout {...layout} account={accountOf(visitor)}>
      {body}
    </Layout>,
  );
  // Counted as it is sent (a 429 replaces it), unless it is a 304.
  await sendAnswer(exchange, html, {
    status,
    contentType: HTML_TYPE,
    cache,
    ...(modifiedAt ? { modifiedAt } : {}),
    headers: { ...PAGE_HEADERS, ...(cache ? {} : PRIVATE_PAGE), ...headers },
  });
}

/** What following a video's generation takes, whatever its kind: the video, the response to stream on, where to resume. */
type FollowInput = { videoId: string; res: ServerResponse; resumeFrom: string | undefined };

/**
 * `/videos/:videoId/<kind>/live`: a generation's progress as its API stream sends it, to this visitor
 * (the video page's script follows it while a summary or a stenogram is being written).
 */
export const generationLivePage = (path: string, follow: Action<FollowInput, typeof handled>) =>
  definePage({
    method: 'GET',
    path,
    params: videoParams,
    query: z.object({ lastEventId: z.string().max(64).optional() }),
    access: follow.access,
    async handler(ctx) {
      const { req, res, params, query } = ctx;
      return perform(follow, ctx, { videoId: params.videoId, res, resumeFrom: lastEventId(req, query.lastEventId) });
    },
  });
