import type { LogFields, Logger } from '../log.ts';
import { sanitiseStrings, type SubstitutionCounts } from '../text/sanitiseText.ts';

/**
 * Source records as they can be stored: every string sanitised (sanitiseText), once, on the way
 * into the database. A batch that needed it is logged once, with the substitutions by field.
 */
export function storableRecords<T>(records: readonly T[], context: LogFields, log?: Logger): T[] {
  const substitutions: SubstitutionCounts = {};
  const clean = records.map((record) => sanitiseStrings(record, substitutions));
  if (Object.keys(substitutions).length) {
    log?.warn('source text sanitised: NUL and lone surrogates stored as U+FFFD', { ...context, records: records.length, substitutions });
  }
  return clean;
}
