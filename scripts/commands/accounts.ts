import { createApiKey } from '../../core/accounts/createApiKey.ts';
import { createUser, requireUserByEmail } from '../../core/accounts/createUser.ts';
import { password } from '../../core/accounts/password.ts';
import { setPassword } from '../../core/accounts/setPassword.ts';
import { listApiKeys } from '../../core/accounts/listApiKeys.ts';
import { revokeApiKey } from '../../core/accounts/revokeApiKey.ts';
import { AppError } from '../../core/errors.ts';
import { email } from '../../core/email/normalizeEmail.ts';
import { scopeLabel, tierName } from '../../core/schemas.ts';
import { loadTiers } from '../../core/tiers/loadTiers.ts';
import { output, parseOptions, subcommand, table, UsageError } from '../cli.ts';
import { DATABASE_CHOICE, dataDirOption, withChosenDatabase } from '../serviceDatabase.ts';

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
  npx afterimage users create --email E --tier anonymous|registered|plus|pro [--admin] [--password-stdin] [--data-dir DIR] [--json]
  npx afterimage users password --email E --password-stdin [--data-dir DIR] [--json]
The password is read from standard input (never from the command line, where ps and shell history see it):
  printf '%s' "$PASSWORD" | npx afterimage users password --email E --password-stdin
Which tiers have API access: npx afterimage tiers list. ${DATABASE_CHOICE}`;

const KEYS_USAGE = `usage:
  npx afterimage keys create --user E [--scope L1|L2|L3|L4] [--data-dir DIR] [--json]   a new key; it replaces (revokes) the user's current one
  npx afterimage keys revoke --user E [--data-dir DIR] [--json]
  npx afterimage keys list [--all] [--data-dir DIR] [--json]   prefixes, owners and scopes (--all: revoked ones too); never the keys
${DATABASE_CHOICE}`;

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

export async function usersCommand(command: string[]): Promise<void> {
  const [action, args] = subcommand(command, ['create', 'password'], USERS_USAGE);
  if (action === 'create') {
    const { values } = parseOptions(
      args,
      {
        email: { type: 'string' },
        tier: { type: 'string' },
        admin: { type: 'boolean' },
        'password-stdin': { type: 'boolean' },
        ...dataDirOption,
      },
      { usage: USERS_USAGE },
    );
    if (!values.email || !values.tier) throw new UsageError(USERS_USAGE);
    const input = {
      email: valid(email, values.email, '--email'),
      tier: valid(tierName, values.tier, '--tier'),
      isAdmin: values.admin ?? false,
      ...(values['password-stdin'] ? { password: await passwordFromStdin() } : {}),
    };
    const { user, apiAccess } = await withChosenDatabase(values['data-dir'], async (db) => {
      const user = await createUser(db.sql, input);
      return { user, apiAccess: (await loadTiers(db.sql)).find((tier) => tier.name === user.tier)?.apiAccess ?? false };
    });
    const signIn =
      input.password === undefined
        ? `\nno password: sign-in on the website needs one (npx afterimage users password --email ${user.email} --password-stdin)`
        : '\nthey can sign in on the website with this email and password';
    output(
      values.json,
      user,
      () =>
        `created user ${user.email} (${user.tier}${user.isAdmin ? ', administrator' : ''}), id ${user.id}${signIn}\n${
          apiAccess
            ? `an API key: npx afterimage keys create --user ${user.email}`
            : `the ${user.tier} tier has no API access (npx afterimage tiers list): they use the website`
        }`,
    );
    return;
  }
  const { values } = parseOptions(
    args,
    { email: { type: 'string' }, 'password-stdin': { type: 'boolean' }, ...dataDirOption },
    { usage: USERS_USAGE },
  );
  if (!values.email || !values['password-stdin']) throw new UsageError(USERS_USAGE);
  const address = valid(email, values.email, '--email');
  const secret = await passwordFromStdin();
  const { endedSessions } = await withChosenDatabase(values['data-dir'], async (db) =>
    setPassword(db.sql, (await requireUserByEmail(db.sql, address)).id, secret),
  );
  output(
    values.json,
    { email: address, endedSessions },
    () =>
      `set the password of ${address}${endedSessions ? `; signed out ${endedSessions} session${endedSessions === 1 ? '' : 's'} of theirs` : ''}`,
  );
}

export async function keysCommand(command: string[]): Promise<void> {
  const [action, args] = subcommand(command, ['create', 'revoke', 'list'], KEYS_USAGE);
  if (action === 'create') {
    const { values } = parseOptions(args, { user: { type: 'string' }, scope: { type: 'string' }, ...dataDirOption }, { usage: KEYS_USAGE });
    if (!values.user) throw new UsageError(KEYS_USAGE);
    const scope = values.scope === undefined ? undefined : valid(scopeLabel, values.scope.toUpperCase(), '--scope');
    const created = await withChosenDatabase(values['data-dir'], async (db) =>
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
    const { values } = parseOptions(args, { user: { type: 'string' }, ...dataDirOption }, { usage: KEYS_USAGE });
    if (!values.user) throw new UsageError(KEYS_USAGE);
    const prefix = await withChosenDatabase(values['data-dir'], async (db) =>
      revokeApiKey(db.sql, (await requireUserByEmail(db.sql, values.user!)).id),
    );
    if (!prefix) throw new AppError('NOT_FOUND', `${values.user} has no active key`);
    output(values.json, { revoked: true, prefix }, () => `revoked ${prefix}… of ${values.user}`);
    return;
  }
  const { values } = parseOptions(args, { all: { type: 'boolean' }, ...dataDirOption }, { usage: KEYS_USAGE });
  const keys = await withChosenDatabase(values['data-dir'], (db) => listApiKeys(db.sql, { includeRevoked: values.all ?? false }));
  output(values.json, keys, () => table(keys.map((key) => ({ ...key, prefix: `${key.prefix}…` }))));
}
