import type { VNode } from 'preact';
import { CSRF_FIELD, formToken } from '../http/csrf.ts';
import type { PageContext } from './page.tsx';

/** What a form needs to carry its CSRF token: the request (its session), the response (a first visitor's cookie), the config. */
export type FormContext = Pick<PageContext<unknown, unknown, unknown>, 'req' | 'res' | 'deps'>;

/** The hidden CSRF field of a form that changes something and posts to `action` (servePage checks it there). */
export function FormToken({ ctx, action }: { ctx: FormContext; action: string }): VNode {
  return <input type="hidden" name={CSRF_FIELD} value={formToken(ctx.req, ctx.res, ctx.deps.config, action)} />;
}
