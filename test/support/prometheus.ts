/**
 * A strict reader of Prometheus's text exposition format (version 0.0.4), for tests of `/metrics`:
 * every line must be a HELP, a TYPE, a blank line or a sample of a family declared before it (its
 * samples together), label values escaped, values numbers; a histogram's buckets must carry `le`,
 * rise with it, end at `+Inf` and agree with `_count`. Anything else throws, naming the line.
 */

type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** A value as Prometheus reads it (Go's ParseFloat: infinities and NaN in any case; prom-client writes `Nan`). */
function parseValue(text: string, line: string): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`not a number: ${JSON.stringify(text)} in ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const match = /^([^=]+)="((?:[^"\\\n]|\\[\\"n])*)"(,?)/.exec(rest);
    if (!match || !LABEL_NAME.test(match[1]!)) throw new Error(`malformed labels in ${line}`);
    if (match[1]! in labels) throw new Error(`label ${match[1]} twice in ${line}`);
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : escaped));
    rest = rest.slice(match[0].length);
    if (!match[3] && rest.length > 0) throw new Error(`labels not separated by commas in ${line}`);
  }
  return labels;
}

/** The sample names a family of this type may have. */
function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(sampleName);
  if (direct && direct.type !== 'histogram' && direct.type !== 'summary') return direct;
  const suffix = /^(.*)_(bucket|sum|count)$/.exec(sampleName);
  const family = suffix ? families.get(suffix[1]!) : undefined;
  if (family?.type === 'histogram') return family;
  if (family?.type === 'summary' && suffix![2] !== 'bucket') return family;
  if (direct?.type === 'summary') return direct;
  return undefined;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    if (sample.name.endsWith('_bucket') && le === undefined) throw new Error(`${family.name}: a bucket without le`);
    series.set(key, [...(series.get(key) ?? []), sample]);
  }
  for (const [key, samples] of series) {
    const buckets = samples.filter((sample) => sample.name.endsWith('_bucket'));
    const count = samples.find((sample) => sample.name.endsWith('_count'));
    if (!samples.some((sample) => sample.name.endsWith('_sum')) || !count) throw new Error(`${family.name} ${key}: no _sum or _count`);
    if (buckets.at(-1)?.labels.le !== '+Inf') throw new Error(`${family.name} ${key}: the last bucket is not +Inf`);
    for (let index = 1; index < buckets.length; index++) {
      if (parseValue(buckets[index]!.labels.le!, family.name) <= parseValue(buckets[index - 1]!.labels.le!, family.name))
        throw new Error(`${family.name} ${key}: buckets not in rising order of le`);
      if (buckets[index]!.value < buckets[index - 1]!.value) throw new Error(`${family.name} ${key}: bucket counts fall`);
    }
    if (buckets.at(-1)!.value !== count.value) throw new Error(`${family.name} ${key}: the +Inf bucket differs from _count`);
  }
}

/** Every family of a scrape, by name. */
export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: Family | undefined;
  const declare = (name: string) => {
    if (current?.name !== name && families.get(name)?.samples.length) throw new Error(`${name}: declared after its samples`);
    const family = families.get(name) ?? { name, type: 'untyped' as MetricType, help: '', samples: [] };
    families.set(name, family);
    current = family;
    return family;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (comment) {
      if (!new RegExp(`^${NAME}$`).test(comment[2]!)) throw new Error(`bad metric name in ${line}`);
      const family = declare(comment[2]!);
      if (comment[1] === 'HELP') family.help = comment[3]!;
      else {
        if (!TYPES.has(comment[3] as MetricType)) throw new Error(`unknown type in ${line}`);
        family.type = comment[3] as MetricType;
      }
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample: ${line}`);
    const family = familyOf(match[1]!, families);
    if (!family) throw new Error(`a sample of no declared family: ${line}`);
    if (family !== current) throw new Error(`${family.name}: its samples are not together (${line})`);
    family.samples.push({ name: match[1]!, labels: parseLabels(match[2] ?? '', line), value: parseValue(match[3]!, line) });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The value of one sample of a scrape (0 when the series is absent: a counter not moved yet). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  for (const family of families.values())
    for (const sample of family.samples)
      if (sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value)) return sample.value;
  return 0;
}
