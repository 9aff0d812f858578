import { describeConfig } from '../../core/config.ts';
import { output, parseOptions, setup } from '../cli.ts';

const USAGE = `usage: npx afterimage config [--json]
prints the configuration this shell's environment gives (with the defaults), secrets masked, without
connecting to anything. A running service read its own environment when it started, which may differ.`;

/** `afterimage config`: this shell's effective configuration, secrets masked, without connecting to anything. */
export function configCommand(args: string[]): void {
  const { values } = parseOptions(args, {}, { usage: USAGE });
  const { config } = setup();
  const described = describeConfig(config);
  output(values.json, described, () =>
    [
      "# this shell's settings (environment and defaults); a running service uses the environment it was started with",
      ...Object.entries(described).map(([key, value]) => `${key}=${value ?? ''}`),
    ].join('\n'),
  );
}
