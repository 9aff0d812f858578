import type { VNode } from 'preact';
import { CSRF_FIELD, formToken } from '../http/csrf.ts';
import type { PageContext } from './page.tsx';

/** The hidden CSRF field of a form that changes something and posts to `action` (checked with checkFormToken). */
export function FormToken({ ctx, action }: { ctx: Pick<PageContext<unknown, unknown, unknown>, 'req' | 'res' | 'deps'>; action: string }): VNode {
  return <input type="hidden" name={CSRF_FIELD} value={formToken(ctx.req, ctx.res, ctx.deps.config, action)} />;
}
