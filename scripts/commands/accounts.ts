import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser, requireUserByEmail } from '../../core/accounts/createUser.ts';
import { password } from '../../core/accounts/password.ts';
import { setPassword } from '../../core/accounts/setPassword.ts';
import { listApiKeys } from '../../core/accounts/listApiKeys.ts';
import { revokeApiKey } from '../../core/accounts/revokeApiKey.ts';
import { AppError } from '../../core/errors.ts';
import { email } from '../../core/email/normalizeEmail.ts';
import { scopeLabel, tierName } from '../../core/schemas.ts';
import { output, parseOptions, table, UsageError, withDatabase } from '../cli.ts';

function valid<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: Array<{ message: string }> } } },
  value: unknown,
  flag: string,
  echo = true,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new UsageError(`${flag}: ${parsed.error.issues[0]?.message ?? 'invalid'}${echo ? ` (got ${JSON.stringify(value)})` : ''}`);
  return parsed.data;
}

const USERS_USAGE = `usage:
  afterimage users create --email E --tier anonymous|registered|plus|pro [--admin] [--password-stdin] [--json]
  afterimage users password --email E --password-stdin [--json]
The password is read from standard input (never from the command line, where ps and shell history see it):
  printf '%s' "$PASSWORD" | afterimage users password --email E --password-stdin`;

/**
 * The password piped to the command: all of stdin but one final line break (what echo adds). Never
 * an argument, which other users of the machine can read in the process list.
 */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('type the password, then press Enter and Ctrl-D\n');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  return valid(password, text, 'password (stdin)', false);
}

export async function usersCommand([action, ...args]: string[]): Promise<void> {
  if (action === 'create') {
    const { values } = parseOptions(args, {
      email: { type: 'string' },
      tier: { type: 'string' },
      admin: { type: 'boolean' },
      'password-stdin': { type: 'boolean' },
    });
    if (!values.email || !values.tier) throw new UsageError(USERS_USAGE);
    const input = {
      email: valid(email, values.email, '--email'),
      tier: valid(tierName, values.tier, '--tier'),
      isAdmin: values.admin ?? false,
      ...(values['password-stdin'] ? { password: await passwordFromStdin() } : {}),
    };
    const user = await withDatabase((db) => createUser(db.sql, input));
    const signIn =
      input.password === undefined
        ? `\nno password: sign-in on the website needs one (afterimage users password --email ${user.email} --password-stdin)`
        : '\nthey can sign in on the website with this email and password';
    output(
      values.json,
      user,
      () =>
        `created user ${user.email} (${user.tier}${user.isAdmin ? ', administrator' : ''}), id ${user.id}${signIn}\nan API key: afterimage keys create --user ${user.email}`,
    );
    return;
  }
  if (action === 'password') {
    const { values } = parseOptions(args, { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } });
    if (!values.email || !values['password-stdin']) throw new UsageError(USERS_USAGE);
    const address = valid(email, values.email, '--email');
    const secret = await passwordFromStdin();
    const { endedSessions } = await withDatabase(async (db) => setPassword(db.sql, (await requireUserByEmail(db.sql, address)).id, secret));
    output(
      values.json,
      { email: address, endedSessions },
      () =>
        `set the password of ${address}${endedSessions ? `; signed out ${endedSessions} session${endedSessions === 1 ? '' : 's'} of theirs` : ''}`,
    );
    return;
  }
  throw new UsageError(USERS_USAGE);
}

export async function keysCommand([action, ...args]: string[]): Promise<void> {
  if (action === 'create') {
    const { values } = parseOptions(args, { user: { type: 'string' }, scope: { type: 'string' } });
    if (!values.user) throw new UsageError('usage: afterimage keys create --user E [--scope L1|L2|L3|L4] [--json]');
    const scope = values.scope === undefined ? undefined : valid(scopeLabel, values.scope.toUpperCase(), '--scope');
    const created = await withDatabase(async (db) =>
      createApiKey(db.sql, { userId: (await requireUserByEmail(db.sql, values.user!)).id, scope }),
    );
    output(values.json, { key: created.key, userId: created.userId, scope: created.scope }, () =>
      [
        `API key for ${values.user} (scope ${created.scope}); it is shown only this once, store it now:`,
        '',
        `  ${created.key}`,
        '',
        created.revokedKeyId ? 'The previous key of this user was revoked and stops working now.' : '',
      ]
        .join('\n')
        .trimEnd(),
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
