import { z } from 'zod';
import { createSignInLink } from '../../../core/accounts/createSignInLink.ts';
import { createUser } from '../../../core/accounts/createUser.ts';
import { listUsers } from '../../../core/accounts/listUsers.ts';
import { password as passwordSchema } from '../../../core/accounts/password.ts';
import { setUserTier } from '../../../core/accounts/setUserTier.ts';
import { AppError } from '../../../core/errors.ts';
import { email as emailSchema } from '../../../core/email/normalizeEmail.ts';
import { limitName, tierName } from '../../../core/schemas.ts';
import { FormToken } from '../formToken.tsx';
import { definePage, redirect, type PageContext, type PageView } from '../page.tsx';
import { person } from './account.tsx';
import { publicOrigin } from '../../http/publicOrigin.ts';
import { perform } from '../../http/route.ts';
import { changeTier, listTiers } from '../../actions/system.ts';

type Ctx = PageContext<unknown, unknown, unknown>;
const admin = { admin: true } as const;
const fields = z.looseObject({});
const refuse = (message: string) => new AppError('INVALID_INPUT', message);

/** An administrator's form, posted from a session (not with a key) and carrying its CSRF token: its fields. */
function adminForm(ctx: Ctx & { form: unknown }): Record<string, string | undefined> {
  person(ctx);
  return ctx.form as Record<string, string | undefined>;
}

/** Where the public reaches this site, for a sign-in link shown to an administrator. */

async function usersView(ctx: Ctx, shown: { link?: { email: string; url: string } } = {}): Promise<PageView> {
  const users = await listUsers(ctx.deps.sql);
  return {
    title: 'Users',
    headers: shown.link ? { 'Cache-Control': 'no-store' } : {},
    body: (
      <section>
        <h1>Users</h1>
        {shown.link ? (
          <div class="notice" role="status">
            <p>{shown.link.email} has no password: give them this one-time sign-in link (it works once, within the hour):</p>
            <p>
              <code id="sign-in-link">{shown.link.url}</code>
            </p>
          </div>
        ) : null}
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Tier</th>
                <th scope="col">Signs in with</th>
                <th scope="col">API key</th>
              </tr>
            </thead>
            <tbody>
              {users.map((user) => (
                <tr key={user.id}>
                  <td>
                    {user.email}
                    {user.isAdmin ? ' (administrator)' : ''}
                  </td>
                  <td>
                    <form method="post" action="/admin/users/tier" class="inline-form">
                      <FormToken ctx={ctx} action="/admin/users/tier" />
                      <input type="hidden" name="userId" value={user.id} />
                      <label for={`tier-${user.id}`} class="visually-hidden">
                        Tier of {user.email}
                      </label>
                      <select id={`tier-${user.id}`} name="tier">
                        {tierName.options.map((tier) => (
                          <option key={tier} value={tier} selected={tier === user.tier}>
                            {tier}
                          </option>
                        ))}
                      </select>
                      <button type="submit" class="secondary">
                        Set
                      </button>
                    </form>
                  </td>
                  <td>{user.hasPassword ? 'a password' : 'keys only'}</td>
                  <td>{user.activeKeyPrefix ? <code>{user.activeKeyPrefix}…</code> : 'none'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <h2>Create a user</h2>
        <form method="post" action="/admin/users" class="account-form">
          <FormToken ctx={ctx} action="/admin/users" />
          <div class="field">
            <label for="new-email">Email</label>
            <input id="new-email" name="email" type="email" required />
          </div>
          <div class="field">
            <label for="new-tier">Tier</label>
            <select id="new-tier" name="tier">
              {tierName.options.map((tier) => (
                <option key={tier} value={tier} selected={tier === 'registered'}>
                  {tier}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="new-password">Password (leave empty for a one-time sign-in link)</label>
            <input id="new-password" name="password" type="password" autoComplete="new-password" />
          </div>
          <p>
            <input id="new-admin" name="admin" type="checkbox" value="on" /> <label for="new-admin">Administrator</label>
          </p>
          <button type="submit">Create the user</button>
        </form>
      </section>
    ),
  };
}

export const usersPage = definePage({
  method: 'GET',
  path: '/admin/users',
  access: admin,
  async handler(ctx) {
    return usersView(ctx);
  },
});

export const createUserPost = definePage({
  method: 'POST',
  path: '/admin/users',
  access: admin,
  form: fields,
  async handler(ctx) {
    const form = adminForm(ctx);
    const email = emailSchema.safeParse(form.email ?? '');
    if (!email.success) throw refuse('email: expected an email address');
    const tier = tierName.safeParse(form.tier);
    if (!tier.success) throw refuse(`tier: one of ${tierName.options.join(', ')}`);
    const password = form.password ? passwordSchema.safeParse(form.password) : undefined;
    if (password && !password.success) throw refuse(`password: ${password.error.issues[0]!.message}`);
    const user = await createUser(ctx.deps.sql, {
      email: email.data,
      tier: tier.data,
      isAdmin: form.admin === 'on',
      ...(password ? { password: password.data } : {}),
    });
    if (password) return redirect('/admin/users');
    const link = await createSignInLink(ctx.deps.sql, user.id);
    return usersView(ctx, { link: { email: user.email, url: `${publicOrigin(ctx.deps.config, ctx.req)}/login/once/${link.token}` } });
  },
});

export const setTierPost = definePage({
  method: 'POST',
  path: '/admin/users/tier',
  access: admin,
  form: fields,
  async handler(ctx) {
    const form = adminForm(ctx);
    const tier = tierName.safeParse(form.tier);
    const userId = z.uuid().safeParse(form.userId);
    if (!tier.success || !userId.success) throw refuse('choose a user and one of the tiers');
    await setUserTier(ctx.deps.sql, userId.data, tier.data);
    return redirect('/admin/users');
  },
});

export const tiersPage = definePage({
  method: 'GET',
  path: '/admin/tiers',
  access: admin,
  async handler(ctx) {
    const tiers = await perform(listTiers, ctx, undefined);
    return {
      title: 'Tiers',
      body: (
        <section>
          <h1>Tiers</h1>
          <p class="muted">Limits per tier: a number, empty for unlimited, 0 to forbid. API processes pick a change up within 5 seconds.</p>
          {tiers.map((tier) => (
            <form key={tier.name} method="post" action={`/admin/tiers/${tier.name}`} class="tier-form">
              <FormToken ctx={ctx} action={`/admin/tiers/${tier.name}`} />
              <h2>{tier.displayName}</h2>
              {limitName.options.map((limit) => (
                <div class="field" key={limit}>
                  <label for={`${tier.name}-${limit}`}>{tier.limits[limit].description}</label>
                  <input
                    id={`${tier.name}-${limit}`}
                    name={limit}
                    type="number"
                    min="0"
                    inputMode="numeric"
                    value={tier.limits[limit].max === null ? '' : String(tier.limits[limit].max)}
                  />
                </div>
              ))}
              <button type="submit">Save the {tier.displayName} tier</button>
            </form>
          ))}
        </section>
      ),
    };
  },
});

export const editTierPost = definePage({
  method: 'POST',
  path: '/admin/tiers/:name',
  params: z.strictObject({ name: tierName }),
  access: admin,
  form: fields,
  async handler(ctx) {
    const form = adminForm(ctx);
    const limits: Record<string, number | null> = {};
    for (const limit of limitName.options) {
      const value = form[limit]?.trim();
      if (value === undefined) continue;
      if (value !== '' && !/^\d{1,9}$/.test(value)) throw refuse(`${limit}: a whole number, or empty for unlimited`);
      limits[limit] = value === '' ? null : Number(value);
    }
    await perform(changeTier, ctx, { name: ctx.params.name, changes: { limits } });
    return redirect('/admin/tiers');
  },
});
