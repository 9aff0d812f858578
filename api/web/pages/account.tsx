import { z } from 'zod';
import { createApiKey } from '../../../core/accounts/createApiKey.ts';
import { listApiKeys } from '../../../core/accounts/listApiKeys.ts';
import { password as passwordSchema, PASSWORD_MIN_LENGTH, verifyPassword } from '../../../core/accounts/password.ts';
import { revokeApiKey } from '../../../core/accounts/revokeApiKey.ts';
import { setPassword } from '../../../core/accounts/setPassword.ts';
import { countSignInAttempt } from '../../../core/accounts/signInAttempts.ts';
import { AppError } from '../../../core/errors.ts';
import { scopeLabel, scopeLevel, type ScopeLabel } from '../../../core/schemas.ts';
import { listStenograms } from '../../../core/stenograms/listStenograms.ts';
import { listOwnSummaries } from '../../../core/summaries/listOwnSummaries.ts';
import { clientAddress, type Caller } from '../../http/guard.ts';
import { perform } from '../../http/route.ts';
import { readUsage } from '../../actions/usage.ts';
import { whenInWords } from '../duration.ts';
import { FormToken } from '../formToken.tsx';
import { keepNewKey, takeNewKey } from '../oneTimeKey.ts';
import { definePage, redirect, type PageContext, type PageView } from '../page.tsx';

type Ctx = PageContext<unknown, unknown, unknown>;
type Person = Extract<Caller, { kind: 'session' }>;

const fields = z.looseObject({ scope: z.string().optional(), current: z.string().optional(), password: z.string().optional() });
const notices = {
  revoked: 'Your API key was revoked; it stops working now.',
  password: 'Password changed; every other session of yours was signed out.',
  'password-set': 'Password set: sign in with your email and it next time.',
  'key-shown': 'That new API key was already shown, only once: it is not kept anywhere to show again. If you did not copy it, replace it.',
} as const;
const accountQuery = z.looseObject({ done: z.enum(['revoked', 'password', 'password-set']).optional() });

/** The signed-in person a form of the account page acts for; 401 (a page saying to sign in) otherwise. */
export function person(ctx: Pick<Ctx, 'visitor'>): Person {
  if (ctx.visitor.kind !== 'session') throw new AppError('UNAUTHORIZED', 'Your session has ended: sign in again at /login');
  return ctx.visitor;
}

const limitWindow = (seconds: number) =>
  (({ 60: 'per minute', 900: 'per 15 minutes', 3600: 'per hour', 86400: 'per day' }) as Record<number, string>)[seconds] ??
  `per ${seconds} s`;

/** The form that creates a key (revoking the active one, if any): its scope, at most the tier's. */
function KeyForm({ ctx, maxScope, submit }: { ctx: Ctx; maxScope: number; submit: string }) {
  return (
    <form method="post" action="/account/keys" class="inline-form">
      <FormToken ctx={ctx} action="/account/keys" />
      <label for="key-scope">Scope</label>
      <select id="key-scope" name="scope">
        {scopeLabel.options
          .filter((scope) => scopeLevel(scope) <= maxScope)
          .map((scope) => (
            <option key={scope} value={scope} selected={scopeLevel(scope) === maxScope}>
              {scope}
            </option>
          ))}
      </select>
      <button type="submit">{submit}</button>
    </form>
  );
}

async function accountView(
  ctx: Ctx,
  visitor: Person,
  shown: { newKey?: { key: string; scope: string }; notice?: string; passwordError?: string; status?: number },
): Promise<PageView> {
  const { sql } = ctx.deps;
  const [usage, keys, summaries, stenograms, [row]] = await Promise.all([
    perform(readUsage, ctx, undefined),
    listApiKeys(sql, { includeRevoked: true, userId: visitor.userId }),
    listOwnSummaries(sql, visitor.userId),
    listStenograms(sql, visitor.userId, 1),
    sql<{ hasPassword: boolean }[]>`select password_hash is not null as "hasPassword" from users where id = ${visitor.userId}`,
  ]);
  const maxScope = scopeLevel(visitor.tier.maxKeyScope);
  const active = keys.find((key) => key.revokedAt === null);
  return {
    title: 'Your account',
    status: shown.status ?? 200,
    // A page showing a new key is never stored, not even by the browser's history cache.
    headers: shown.newKey ? { 'Cache-Control': 'no-store' } : {},
    body: (
      <section class="account">
        <h1>Your account</h1>
        {shown.notice ? (
          <p class="notice" role="status">
            {shown.notice}
          </p>
        ) : null}
        <p>
          Signed in as <strong>{visitor.email}</strong>, {visitor.tier.displayName} tier{visitor.isAdmin ? ', administrator' : ''}.
        </p>
        <form method="post" action="/logout">
          <FormToken ctx={ctx} action="/logout" />
          <button type="submit" class="secondary">
            Sign out
          </button>
        </form>
        {visitor.isAdmin ? (
          <p>
            Administration: <a href="/admin/users">users</a> · <a href="/admin/tiers">tiers</a>
          </p>
        ) : null}

        <h2>Usage</h2>
        {usage.limitsEnforced ? null : (
          <p data-limits-enforced="false">
            As an administrator you are not held to these limits: your use is counted and shown here, never refused.
          </p>
        )}
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Limit</th>
                <th scope="col">Used</th>
                <th scope="col">Allowed</th>
                <th scope="col">Resets</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(usage.limits).map(([name, limit]) => (
                <tr key={name} data-limit={name}>
                  <td>{limit.description}</td>
                  <td>{limit.used}</td>
                  <td>{limit.max === null ? 'unlimited' : `${limit.max} ${limitWindow(limit.windowSeconds)}`}</td>
                  <td>{whenInWords(limit.resetSeconds)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Allowance</th>
                <th scope="col">Held</th>
                <th scope="col">Allowed at once</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(usage.allowances).map(([name, allowance]) => (
                <tr key={name} data-allowance={name}>
                  <td>{allowance.description}</td>
                  <td>{allowance.held}</td>
                  <td>{allowance.max === null ? 'unlimited' : `${allowance.max} ${allowance.unit}`}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>

        <h2>API key</h2>
        {shown.newKey ? (
          <div class="notice" role="status">
            <p>Your new API key (scope {shown.newKey.scope}). It is shown only this once: copy it now.</p>
            <p class="new-key">
              <code id="new-key">{shown.newKey.key}</code> {/* Shown by site.js where the clipboard can be written. */}
              <button type="button" class="secondary" data-copy="new-key" hidden>
                Copy
              </button>
            </p>
          </div>
        ) : null}
        {visitor.tier.apiAccess ? null : (
          <p class="muted">
            The {visitor.tier.displayName} tier has no API access: a key can read your usage (/api/features) and nothing else.
          </p>
        )}
        {keys.length ? (
          <ul class="keys">
            {keys.map((key) => (
              <li key={key.prefix}>
                <code>{key.prefix}…</code> scope {key.scope}, created {key.createdAt.slice(0, 10)},{' '}
                {key.revokedAt
                  ? `revoked ${key.revokedAt.slice(0, 10)}`
                  : key.lastUsedAt
                    ? `last used ${key.lastUsedAt.slice(0, 10)}`
                    : 'never used'}
              </li>
            ))}
          </ul>
        ) : (
          <p>You have no API key.</p>
        )}
        {active ? (
          <details class="replace-key">
            <summary>Replace my key</summary>
            <p>
              A new key replaces <code>{active.prefix}…</code>: the old one stops working at once, in every program that uses it.
            </p>
            <KeyForm ctx={ctx} maxScope={maxScope} submit="Revoke the old key and create a new one" />
          </details>
        ) : (
          <KeyForm ctx={ctx} maxScope={maxScope} submit="Create a key" />
        )}
        {active ? (
          <form method="post" action="/account/keys/revoke">
            <FormToken ctx={ctx} action="/account/keys/revoke" />
            <button type="submit" class="secondary">
              Revoke my key
            </button>
          </form>
        ) : null}

        <h2>Your private summaries</h2>
        {summaries.length ? (
          <ul>
            {summaries.map((summary) => (
              <li key={summary.videoId}>
                <a href={`/videos/${summary.videoId}`}>{summary.title}</a> <span class="muted">({summary.status})</span>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">None yet.</p>
        )}
        <h2>Your stenograms</h2>
        {stenograms.rows.length ? (
          <ul>
            {stenograms.rows.map((stenogram) => (
              <li key={stenogram.video_id}>
                <a href={`/videos/${stenogram.video_id}`}>{stenogram.title || stenogram.video_id}</a>{' '}
                <span class="muted">({stenogram.status})</span>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">None yet.</p>
        )}

        <h2>Password</h2>
        <form method="post" action="/account/password" class="account-form">
          <FormToken ctx={ctx} action="/account/password" />
          {shown.passwordError ? (
            <div class="error-box" role="alert">
              <p>{shown.passwordError}</p>
            </div>
          ) : null}
          {row?.hasPassword ? (
            <div class="field">
              <label for="current-password">Current password</label>
              <input id="current-password" name="current" type="password" autoComplete="current-password" required />
            </div>
          ) : (
            <p class="muted">You have no password yet (you signed in with a one-time link): set one to sign in next time.</p>
          )}
          <div class="field">
            <label for="new-password">New password (at least {PASSWORD_MIN_LENGTH} characters)</label>
            <input id="new-password" name="password" type="password" autoComplete="new-password" minLength={PASSWORD_MIN_LENGTH} required />
          </div>
          <button type="submit">{row?.hasPassword ? 'Change the password' : 'Set the password'}</button>
        </form>
      </section>
    ),
  };
}

export const accountPage = definePage({
  method: 'GET',
  path: '/account',
  query: accountQuery,
  async handler(ctx) {
    if (ctx.visitor.kind !== 'session') return redirect('/login?next=%2Faccount', 303);
    return accountView(ctx, ctx.visitor, { notice: ctx.query.done ? notices[ctx.query.done] : undefined });
  },
});

export const createKeyPost = definePage({
  method: 'POST',
  path: '/account/keys',
  form: fields,
  async handler(ctx) {
    const visitor = person(ctx);
    const scope = scopeLabel.safeParse(ctx.form.scope);
    const created = await createApiKey(ctx.deps.sql, {
      userId: visitor.userId,
      ...(scope.success ? { scope: scope.data as ScopeLabel } : {}),
    });
    // Shown once after a redirect, so reloading that page posts nothing and creates no other key.
    keepNewKey(ctx.req, ctx.res, ctx.deps.config, { key: created.key, scope: created.scope });
    return redirect('/account/keys/new');
  },
});

export const newKeyPage = definePage({
  method: 'GET',
  path: '/account/keys/new',
  async handler(ctx) {
    if (ctx.visitor.kind !== 'session') return redirect('/login?next=%2Faccount', 303);
    const newKey = takeNewKey(ctx.req, ctx.res, ctx.deps.config);
    return accountView(ctx, ctx.visitor, newKey ? { newKey } : { notice: notices['key-shown'] });
  },
});

export const revokeKeyPost = definePage({
  method: 'POST',
  path: '/account/keys/revoke',
  form: fields,
  async handler(ctx) {
    const visitor = person(ctx);
    await revokeApiKey(ctx.deps.sql, visitor.userId);
    return redirect('/account?done=revoked');
  },
});

export const passwordPost = definePage({
  method: 'POST',
  path: '/account/password',
  form: fields,
  async handler(ctx) {
    const visitor = person(ctx);
    const [row] = await ctx.deps.sql<{ hash: string | null }[]>`select password_hash as hash from users where id = ${visitor.userId}`;
    if (row?.hash) {
      // Guessing the current password here is limited like signing in.
      const attempt = await countSignInAttempt(ctx.deps.sql, {
        address: clientAddress(ctx.req, ctx.deps.config.TRUST_PROXY),
        email: visitor.email,
      });
      if (!(await verifyPassword(ctx.form.current ?? '', row.hash)).valid)
        return accountView(ctx, visitor, { passwordError: 'The current password is wrong.', status: 400 });
      await attempt.refund();
    }
    const next = passwordSchema.safeParse(ctx.form.password ?? '');
    if (!next.success)
      return accountView(ctx, visitor, { passwordError: `The new password is ${next.error.issues[0]!.message}.`, status: 400 });
    await setPassword(ctx.deps.sql, visitor.userId, next.data, { keepSessionId: visitor.sessionId });
    return redirect(row?.hash ? '/account?done=password' : '/account?done=password-set');
  },
});
