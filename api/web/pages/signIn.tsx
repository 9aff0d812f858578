import { z } from 'zod';
import { endSession } from '../../../core/accounts/endSession.ts';
import { password as passwordSchema, PASSWORD_MIN_LENGTH } from '../../../core/accounts/password.ts';
import { redeemSignInLink } from '../../../core/accounts/redeemSignInLink.ts';
import { register } from '../../../core/accounts/register.ts';
import { signIn } from '../../../core/accounts/signIn.ts';
import { email as emailSchema } from '../../../core/email/normalizeEmail.ts';
import { AppError, notFound } from '../../../core/errors.ts';
import { clientAddress } from '../../http/guard.ts';
import { appendCookie } from '../../http/cookies.ts';
import { sessionCookie, sessionToken } from '../../http/session.ts';
import { FormToken } from '../formToken.tsx';
import { definePage, redirect, type PageContext, type PageView } from '../page.tsx';
import { safeNextPath } from '../safeNextPath.ts';

type Ctx = PageContext<unknown, unknown, unknown>;

/** Form fields arrive as text; what they must be is checked in the handler, so a mistake is shown in the form. */
const fields = z.looseObject({ email: z.string().optional(), password: z.string().optional(), next: z.string().optional() });
const nextQuery = z.looseObject({ next: z.string().optional() });

/** Where to go after signing in: the path `next` names on this site (api/web/safeNextPath.ts), else the account page. */
const nextPath = (next: string | undefined) => safeNextPath(next, '/account');

const signInAs = (ctx: Ctx, token: string, next: string) => {
  appendCookie(ctx.res, sessionCookie(ctx.deps.config, token));
  return redirect(next);
};

function LoginForm({
  ctx,
  email,
  next,
  error,
}: {
  ctx: Ctx;
  email?: string | undefined;
  next?: string | undefined;
  error?: string | undefined;
}) {
  return (
    <form method="post" action="/login" class="account-form">
      <FormToken ctx={ctx} action="/login" />
      {next ? <input type="hidden" name="next" value={next} /> : null}
      {error ? (
        <div class="error-box" role="alert" id="login-error">
          <p>{error}</p>
        </div>
      ) : null}
      <div class="field">
        <label for="login-email">Email</label>
        <input
          id="login-email"
          name="email"
          type="email"
          autoComplete="username"
          required
          value={email ?? ''}
          aria-describedby={error ? 'login-error' : undefined}
        />
      </div>
      <div class="field">
        <label for="login-password">Password</label>
        <input id="login-password" name="password" type="password" autoComplete="current-password" required />
      </div>
      <button type="submit">Sign in</button>
    </form>
  );
}

/** What sign-up answers, true of a new address and of one that has an account already. */
const REGISTERED = 'Unless this address already had an account, it has one now: sign in with the password you chose.';

function loginView(ctx: Ctx, props: { email?: string; next?: string; error?: string; notice?: string; status?: number }): PageView {
  const open = ctx.deps.config.REGISTRATION === 'open';
  return {
    title: 'Sign in',
    status: props.status ?? 200,
    body: (
      <section class="narrow">
        <h1>Sign in</h1>
        {ctx.visitor.kind === 'session' ? (
          <p class="notice">
            You are signed in as {ctx.visitor.email}. <a href="/account">Your account</a>
          </p>
        ) : null}
        {props.notice ? (
          <p class="notice" role="status">
            {props.notice}
          </p>
        ) : null}
        <LoginForm ctx={ctx} email={props.email} next={props.next} error={props.error} />
        <p class="muted">
          {open ? (
            <>
              No account yet? <a href="/register">Create one</a>.{' '}
            </>
          ) : (
            <>Accounts are created by the operator of this site. </>
          )}
          Without signing in you can search and read with the anonymous tier's limits.
        </p>
      </section>
    ),
  };
}

export const loginPage = definePage({
  method: 'GET',
  path: '/login',
  query: nextQuery,
  async handler(ctx) {
    return loginView(ctx, { next: ctx.query.next && nextPath(ctx.query.next) });
  },
});

export const loginPost = definePage({
  method: 'POST',
  path: '/login',
  form: fields,
  async handler(ctx) {
    const email = emailSchema.safeParse(ctx.form.email ?? '');
    if (!email.success || !ctx.form.password) {
      return loginView(ctx, {
        email: ctx.form.email,
        next: ctx.form.next,
        error: 'Enter your email address and your password.',
        status: 400,
      });
    }
    try {
      const session = await signIn(
        ctx.deps.sql,
        { email: email.data, password: ctx.form.password, address: clientAddress(ctx.req, ctx.deps.config.TRUST_PROXY) },
        ctx.deps.pause,
      );
      return signInAs(ctx, session.token, nextPath(ctx.form.next));
    } catch (error) {
      // A wrong pair is shown in the form; too many attempts is the 429 page, with when to come back.
      if (error instanceof AppError && error.code === 'UNAUTHORIZED')
        return loginView(ctx, { email: email.data, next: ctx.form.next, error: error.message, status: 401 });
      throw error;
    }
  },
});

const linkParams = z.strictObject({ token: z.string().max(100) });

/** GET shows a button and POST signs in: a link scanner or a preview that fetches the link does not use it up. */
export const signInLinkPage = definePage({
  method: 'GET',
  path: '/login/once/:token',
  params: linkParams,
  async handler(ctx) {
    const action = `/login/once/${ctx.params.token}`;
    return {
      title: 'Sign in with a link',
      headers: { 'Cache-Control': 'no-store' },
      body: (
        <section class="narrow">
          <h1>Sign in with a one-time link</h1>
          <p>This link signs you in once. Then set a password on your account page, to sign in with it next time.</p>
          <form method="post" action={action}>
            <FormToken ctx={ctx} action={action} />
            <button type="submit">Sign in</button>
          </form>
        </section>
      ),
    };
  },
});

export const signInLinkPost = definePage({
  method: 'POST',
  path: '/login/once/:token',
  params: linkParams,
  form: fields,
  async handler(ctx) {
    const session = await redeemSignInLink(ctx.deps.sql, ctx.params.token);
    return signInAs(ctx, session.token, '/account');
  },
});

export const logoutPost = definePage({
  method: 'POST',
  path: '/logout',
  form: fields,
  async handler(ctx) {
    const token = sessionToken(ctx.req, ctx.deps.config);
    if (token) await endSession(ctx.deps.sql, token);
    appendCookie(ctx.res, sessionCookie(ctx.deps.config));
    return redirect('/');
  },
});

function registerView(ctx: Ctx, props: { email?: string; error?: string; status?: number }): PageView {
  return {
    title: 'Create an account',
    status: props.status ?? 200,
    body: (
      <section class="narrow">
        <h1>Create an account</h1>
        <p>An account of the Registered tier: higher limits than without one, and summaries you ask for.</p>
        <form method="post" action="/register" class="account-form">
          <FormToken ctx={ctx} action="/register" />
          {props.error ? (
            <div class="error-box" role="alert">
              <p>{props.error}</p>
            </div>
          ) : null}
          <div class="field">
            <label for="register-email">Email</label>
            <input id="register-email" name="email" type="email" autoComplete="username" required value={props.email ?? ''} />
          </div>
          <div class="field">
            <label for="register-password">Password (at least {PASSWORD_MIN_LENGTH} characters)</label>
            <input
              id="register-password"
              name="password"
              type="password"
              autoComplete="new-password"
              minLength={PASSWORD_MIN_LENGTH}
              required
            />
          </div>
          <button type="submit">Create the account</button>
        </form>
        <p class="muted">
          Already have one? <a href="/login">Sign in</a>.
        </p>
      </section>
    ),
  };
}

const registrationOpen = (ctx: Ctx) => {
  if (ctx.deps.config.REGISTRATION !== 'open')
    throw notFound('Sign-up is closed on this site: the operator creates accounts (afterimage users create)');
};

export const registerPage = definePage({
  method: 'GET',
  path: '/register',
  async handler(ctx) {
    registrationOpen(ctx);
    return registerView(ctx, {});
  },
});

export const registerPost = definePage({
  method: 'POST',
  path: '/register',
  form: fields,
  async handler(ctx) {
    registrationOpen(ctx);
    const email = emailSchema.safeParse(ctx.form.email ?? '');
    if (!email.success) return registerView(ctx, { email: ctx.form.email, error: 'Enter a valid email address.', status: 400 });
    const password = passwordSchema.safeParse(ctx.form.password ?? '');
    if (!password.success)
      return registerView(ctx, { email: email.data, error: `The password is ${password.error.issues[0]!.message}.`, status: 400 });
    try {
      await register(ctx.deps.sql, {
        email: email.data,
        password: password.data,
        address: clientAddress(ctx.req, ctx.deps.config.TRUST_PROXY),
      });
    } catch (error) {
      // A mixed-script address, or a look-alike of an account: the person must choose another address.
      if (error instanceof AppError && error.code === 'INVALID_INPUT')
        return registerView(ctx, { email: email.data, error: `${error.message}.`, status: 400 });
      throw error;
    }
    // The same answer whether the address was new or already had an account (REFERENCE: Accounts on the website).
    return loginView(ctx, { email: email.data, notice: REGISTERED });
  },
});
