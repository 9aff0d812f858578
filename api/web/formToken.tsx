import type { VNode } from 'preact';
import { checkFormToken, CSRF_FIELD, formToken } from '../http/csrf.ts';
import type { PageContext } from './page.tsx';

type FormContext = Pick<PageContext<unknown, unknown, unknown>, 'req' | 'res' | 'deps'>;

/** The hidden CSRF field of a form that changes something and posts to `action` (checked there with checkForm). */
export function FormToken({ ctx, action }: { ctx: FormContext; action: string }): VNode {
  return <input type="hidden" name={CSRF_FIELD} value={formToken(ctx.req, ctx.res, ctx.deps.config, action)} />;
}

/** Refuses (403) a form posted here without the CSRF field that FormToken put in it for this path. */
export function checkForm(ctx: FormContext & { form: unknown }): void {
  checkFormToken(ctx.req, ctx.deps.config, ctx.req.path, (ctx.form as Record<string, unknown> | undefined)?.[CSRF_FIELD]);
}
