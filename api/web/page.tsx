import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ComponentChildren } from 'preact';
import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { checkAccess, type Access } from '../http/access.ts';
import type { Caller } from '../http/auth.ts';
import { readFormBody } from '../http/body.ts';
import { describeIssues } from '../http/failure.ts';
import { requestQuota } from '../http/quota.ts';
import { handled, type ApiDeps } from '../http/route.ts';
import { sendErrorPage } from './errorPage.tsx';
import { Layout, type LayoutProps } from './layout.tsx';
import { renderDocument, sendHtml } from './render.ts';
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
  params: P;
  query: Q;
  /** A POST page's form fields, validated. */
  form: F;
  log: Logger;
}

/** A page to render in the site's layout (title, head, scripts as Layout takes them). */
export interface PageView extends Omit<LayoutProps, 'account' | 'children'> {
  body: ComponentChildren;
  status?: number;
  headers?: Record<string, string>;
  /** The same page for every visitor (a shared cache may keep it): the header names no account. */
  sameForEveryone?: boolean;
}

const redirectTag = Symbol('redirect');
export interface Redirect { [redirectTag]: true; location: string; status: 302 | 303 }
/** After a form: 303 See Other, so reloading the next page never posts the form again. */
export const redirect = (location: string, status: 302 | 303 = 303): Redirect => ({ [redirectTag]: true, location, status });
const isRedirect = (value: unknown): value is Redirect => typeof value === 'object' && value !== null && redirectTag in value;

/** One page of the web app: its path, its validated input and what it shows; not part of the OpenAPI document. */
export interface Page<P extends Schema | undefined = Schema | undefined, Q extends Schema | undefined = Schema | undefined, F extends Schema | undefined = Schema | undefined> {
  method: 'GET' | 'POST';
  path: string;
  params?: P;
  query?: Q;
  form?: F;
  /** What the visitor's tier must allow (as a route's `feature`). */
  access?: Access;
  /** Counted against the visitor's requestsPerMinute (default true), as an API request is. */
  rateLimited?: boolean;
  /**
   * What the page shows, where it goes next, or `handled` when it wrote the response itself: a live
   * stream or a file, served by the same functions as the API's route for it, to this visitor.
   */
  handler(ctx: PageContext<Out<P>, Out<Q>, Out<F>>): Promise<PageView | Redirect | typeof handled>;
}

export const definePage = <P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, F extends Schema | undefined = undefined>(page: Page<P, Q, F>): Page =>
  page as unknown as Page;

function parse(schema: Schema | undefined, value: unknown, where: string): unknown {
  if (!schema) return undefined;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new AppError('INVALID_INPUT', describeIssues(parsed.error, where));
  return parsed.data;
}

/** Identify the visitor, check access, count the request, validate, render: the API's order, answered as pages. */
export function servePage(page: Page, deps: ApiDeps) {
  return async (req: PageRequest, res: ServerResponse) => {
    let visitor: Caller | undefined;
    try {
      visitor = await identifyVisitor(deps, req);
      if (page.access) checkAccess(visitor, page.access, 'this page');
      const quota = requestQuota(deps.counterSql ?? deps.sql, visitor, res, page.rateLimited ?? true);
      await quota.start();
      const params = parse(page.params, req.params, 'path');
      const query = parse(page.query, { ...req.query }, 'query');
      const form = page.method === 'POST' ? parse(page.form, await readFormBody(req, deps.config.BODY_LIMIT_BYTES), 'form') : undefined;
      const answer = await page.handler({ req, res, deps, visitor, params, query, form, log: deps.log.child({ reqId: req.id }) }).finally(quota.settle);
      if (answer === handled) return;
      if (isRedirect(answer)) {
        res.writeHead(answer.status, { Location: answer.location, 'Content-Length': 0 });
        res.end();
        return;
      }
      const { body, status, headers, sameForEveryone, ...layout } = answer;
      sendHtml(res, status ?? 200, renderDocument(
        <Layout {...layout} account={sameForEveryone ? undefined : accountOf(visitor)}>
          {body}
        </Layout>,
      ), headers);
    } catch (error) {
      await sendErrorPage(req, res, error, deps, visitor && accountOf(visitor));
    }
  };
}
