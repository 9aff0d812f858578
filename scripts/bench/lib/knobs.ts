/** A benchmark's size from the environment: the defaults are the benchmark, the variables are for smaller runs. */

export function numberKnob(name: string, fallback: number): number {
  const text = process.env[name]?.trim();
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name}=${text} is not a number ≥ 0; unset it for the default, ${fallback}`);
  return value;
}

/** A comma-separated list; blanks dropped. */
export function listKnob(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback)
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** Extra arguments for node before a service's script (e.g. `--cpu-prof`), space-separated. */
export const nodeArgsKnob = (name: string): string[] => process.env[name]?.split(' ').filter(Boolean) ?? [];
