import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser, requireUserByEmail } from '../../core/accounts/createUser.ts';
import { listApiKeys } from '../../core/accounts/listApiKeys.ts';
import { revokeApiKey } from '../../core/accounts/revokeApiKey.ts';
import { AppError } from '../../core/errors.ts';
import { email, scopeLabel, tierName } from '../../core/schemas.ts';
import { output, parseOptions, table, UsageError, withDatabase } from '../cli.ts';

function valid<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: Array<{ message: string }> } } }, value: unknown, flag: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(`${flag}: ${parsed.error.issues[0]?.message ?? 'invalid'} (got ${JSON.stringify(value)})`);
  return parsed.data;
}

export async function usersCommand([action, ...args]: string[]): Promise<void> {
  if (action === 'create') {
    const { values } = parseOptions(args, { email: { type: 'string' }, tier: { type: 'string' }, admin: { type: 'boolean' } });
    if (!values.email || !values.tier) throw new UsageError('usage: afterimage users create --email E --tier anonymous|registered|plus|pro [--admin] [--json]');
    const input = { email: valid(email, values.email, '--email'), tier: valid(tierName, values.tier, '--tier'), isAdmin: values.admin ?? false };
    const user = await withDatabase((db) => createUser(db.sql, input));
    output(values.json, user, () => `created user ${user.email} (${user.tier}${user.isAdmin ? ', administrator' : ''}), id ${user.id}\nnext: afterimage keys create --user ${user.email}`);
    return;
  }
  throw new UsageError('usage: afterimage users create --email E --tier T [--admin] [--json]');
}

export async function keysCommand([action, ...args]: string[]): Promise<void> {
  if (action === 'create') {
    const { values } = parseOptions(args, { user: { type: 'string' }, scope: { type: 'string' } });
    if (!values.user) throw new UsageError('usage: afterimage keys create --user E [--scope L1|L2|L3|L4] [--json]');
    const scope = values.scope === undefined ? undefined : valid(scopeLabel, values.scope.toUpperCase(), '--scope');
    const created = await withDatabase(async (db) => createApiKey(db.sql, { userId: (await requireUserByEmail(db.sql, values.user!)).id, scope }));
    output(values.json, { key: created.key, userId: created.userId, scope: created.scope }, () =>
      [
        `API key for ${values.user} (scope ${created.scope}); it is shown only this once, store it now:`,
        '',
        `  ${created.key}`,
        '',
        created.revokedKeyId ? 'The previous key of this user was revoked and stops working now.' : '',
      ].join('\n').trimEnd(),
    );
    return;
  }
  if (action === 'revoke') {
    const { values } = parseOptions(args, { user: { type: 'string' } });
    if (!values.user) throw new UsageError('usage: afterimage keys revoke --user E [--json]');
    const prefix = await withDatabase(async (db) => revokeApiKey(db.sql, (await requireUserByEmail(db.sql, values.user!)).id));
    if (!prefix) throw new AppError('NOT_FOUND', `${values.user} has no active key`);
    output(values.json, { revoked: true, prefix }, () => `revoked ${prefix}… of ${values.user}`);
    return;
  }
  if (action === 'list') {
    const { values } = parseOptions(args, { all: { type: 'boolean' } });
    const keys = await withDatabase((db) => listApiKeys(db.sql, { includeRevoked: values.all ?? false }));
    output(values.json, keys, () => table(keys.map((key) => ({ ...key, prefix: `${key.prefix}…` }))));
    return;
  }
  throw new UsageError('usage: afterimage keys create|revoke|list …');
}
