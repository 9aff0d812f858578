import { allowanceName, featureName, limitName, scopeLabel, tierName, type Tier } from '../../core/schemas.ts';
import { loadTiers } from '../../core/tiers/loadTiers.ts';
import { tierChanges, updateTier } from '../../core/tiers/updateTier.ts';
import { output, parseOptions, subcommand, table, UsageError } from '../cli.ts';
import { DATABASE_CHOICE, dataDirOption, withChosenDatabase } from '../serviceDatabase.ts';

const USAGE = `usage:
  npx afterimage tiers list [--data-dir DIR] [--json]
  npx afterimage tiers set <tier> [--api-access true|false] [--max-scope L1..L4]
                                  [--feature NAME=on|off]... [--limit NAME=N|unlimited]...
                                  [--allowance NAME=N|unlimited]... [--data-dir DIR] [--json]
${DATABASE_CHOICE}`;

function describe(tiers: Tier[]): string {
  const rows = [
    { setting: 'apiAccess', ...Object.fromEntries(tiers.map((tier) => [tier.name, tier.apiAccess])) },
    { setting: 'maxKeyScope', ...Object.fromEntries(tiers.map((tier) => [tier.name, tier.maxKeyScope])) },
    ...featureName.options.map((feature) => ({
      setting: `feature ${feature}`,
      ...Object.fromEntries(tiers.map((tier) => [tier.name, tier.features[feature] ? 'on' : 'off'])),
    })),
    ...limitName.options.map((limit) => ({
      setting: `limit ${limit}`,
      ...Object.fromEntries(tiers.map((tier) => [tier.name, tier.limits[limit].max ?? 'unlimited'])),
    })),
    ...allowanceName.options.map((allowance) => ({
      setting: `allowance ${allowance}`,
      ...Object.fromEntries(tiers.map((tier) => [tier.name, tier.allowances[allowance].max ?? 'unlimited'])),
    })),
  ];
  return table(rows);
}

function pairs(values: string[] | undefined, flag: string): Array<[string, string]> {
  return (values ?? []).map((value) => {
    const [name, setting] = value.split('=');
    if (!name || setting === undefined) throw new UsageError(`${flag} takes NAME=VALUE (got ${JSON.stringify(value)})`);
    return [name, setting];
  });
}

/** NAME=N|unlimited pairs as the tier changes take them (a malformed number is left for the schema to name). */
const maxima = (values: string[] | undefined, flag: string) =>
  Object.fromEntries(pairs(values, flag).map(([name, max]) => [name, max === 'unlimited' ? null : /^\d+$/.test(max) ? Number(max) : max]));

export async function tiersCommand(command: string[]): Promise<void> {
  const [action, args] = subcommand(command, ['list', 'set'], USAGE);
  if (action === 'list') {
    const { values } = parseOptions(args, dataDirOption, { usage: USAGE });
    const tiers = await withChosenDatabase(values['data-dir'], (db) => loadTiers(db.sql));
    output(values.json, tiers, () => describe(tiers));
    return;
  }
  const { values, positionals } = parseOptions(
    args,
    {
      'api-access': { type: 'string' },
      'max-scope': { type: 'string' },
      feature: { type: 'string', multiple: true },
      limit: { type: 'string', multiple: true },
      allowance: { type: 'string', multiple: true },
      ...dataDirOption,
    },
    { usage: USAGE, positionals: true },
  );
  const name = tierName.safeParse(positionals[0]);
  if (!name.success) throw new UsageError(`${USAGE}\n<tier> is one of ${tierName.options.join(', ')}`);
  const parsed = tierChanges.safeParse({
    apiAccess:
      values['api-access'] === undefined
        ? undefined
        : values['api-access'] === 'true'
          ? true
          : values['api-access'] === 'false'
            ? false
            : values['api-access'],
    maxKeyScope:
      values['max-scope'] === undefined ? undefined : (scopeLabel.safeParse(values['max-scope'].toUpperCase()).data ?? values['max-scope']),
    features: Object.fromEntries(
      pairs(values.feature, '--feature').map(([feature, on]) => [feature, on === 'on' ? true : on === 'off' ? false : on]),
    ),
    limits: maxima(values.limit, '--limit'),
    allowances: maxima(values.allowance, '--allowance'),
  });
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('\n'));
  const tiers = await withChosenDatabase(values['data-dir'], async (db) => {
    await updateTier(db.sql, name.data, parsed.data);
    return loadTiers(db.sql);
  });
  output(
    values.json,
    tiers.find((tier) => tier.name === name.data),
    () => `updated ${name.data}; API processes pick the change up within 5 s\n\n${describe(tiers)}`,
  );
}
