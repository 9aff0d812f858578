import { describeConfig } from '../../core/config.ts';
import { output, parseOptions, setup } from '../cli.ts';

/** `afterimage config`: the effective configuration, secrets masked, without connecting to anything. */
export function configCommand(args: string[]): void {
  const { values } = parseOptions(args, {});
  const { config } = setup();
  const described = describeConfig(config);
  output(values.json, described, () =>
    Object.entries(described)
      .map(([key, value]) => `${key}=${value ?? ''}`)
      .join('\n'),
  );
}
