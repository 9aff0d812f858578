import { AppError } from '../errors.ts';
import { UNSTORABLE_CHARACTER } from './sanitiseText.ts';

/**
 * Whether Postgres can store `text` as it is: what sanitiseText would replace (a NUL, a lone
 * surrogate) it cannot. Text from sources is sanitised; a caller's input with such text is refused.
 */
export const isStorable = (text: string) => !UNSTORABLE_CHARACTER.test(text);

/** Why such input is refused, after the name of the field that held it. */
export const UNSTORABLE_REFUSED = 'must not contain a NUL character (U+0000) or an unpaired surrogate';

/**
 * Refuses a request whose parameters or body hold text Postgres cannot store (a NUL, a lone
 * surrogate), naming the field: one rule for every route, so no such string reaches a query (and
 * turns into a 500) unchecked.
 */
export function refuseUnstorableText(value: unknown, where: string): void {
  const field = findUnstorable(value);
  if (field) throw new AppError('INVALID_INPUT', `${field.length ? field.join('.') : where}: ${UNSTORABLE_REFUSED}`);
}

interface Visit {
  value: unknown;
  key?: string;
  parent?: Visit;
}

function pathOf(visit: Visit): string[] {
  const keys: string[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse();
}

/** The path of the first string (or key) Postgres cannot store. Iterative: a body may nest deeper than the call stack goes. */
function findUnstorable(root: unknown): string[] | undefined {
  const pending: Visit[] = [{ value: root }];
  for (let visit = pending.pop(); visit; visit = pending.pop()) {
    const { value } = visit;
    if (typeof value === 'string') {
      if (!isStorable(value)) return pathOf(visit);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (!isStorable(key)) return pathOf({ value: inner, key, parent: visit });
        pending.push({ value: inner, key, parent: visit });
      }
    }
  }
  return undefined;
}
