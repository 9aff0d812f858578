import { AppError } from '../errors.ts';
import { isStorable, UNSTORABLE_REFUSED } from '../text/storableText.ts';
import { fold } from '../text/fold.ts';

/**
 * The query language of GET /api/fts: every word must match; "an exact phrase"; -word or -"a phrase"
 * excludes; OR (in capitals) between two items matches either. Case and accents never matter.
 */

/** One word or quoted phrase as the user wrote it, with the tokens it folds to (more than one: they must be adjacent). */
export interface Term {
  text: string;
  tokens: string[];
}

export interface FtsQuery {
  /** Every group must match; a group matches when any of its terms does. */
  groups: Term[][];
  excluded: Term[];
}

export const MAX_QUERY_LENGTH = 500;
const MAX_QUERY_TERMS = 32;

// Han, kana, Hangul syllables, CJK compatibility ideographs: written without spaces, so each character is a token.
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
const TOKEN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[\p{L}\p{N}]+/gu;

/** The tokens a text is indexed and searched by: runs of letters and digits, and each CJK character alone. */
export function tokenize(text: string): string[] {
  return fold(text).match(TOKEN) ?? [];
}

export const isCjkToken = (token: string) => CJK.test(token);

const invalidQuery = (message: string) => new AppError('INVALID_INPUT', `q: ${message}`);

interface Item {
  term: Term;
  negated: boolean;
}

/** Splits q into words and phrases, each possibly negated, and the OR operators between them. */
function lex(q: string): Array<Item | 'OR'> {
  const items: Array<Item | 'OR'> = [];
  const pattern = /(-?)"([^"]*)"?|(\S+)/gu;
  for (const match of q.matchAll(pattern)) {
    const [, minus, phrase, word] = match;
    if (word === 'OR' || word === '|') {
      items.push('OR');
      continue;
    }
    const negated = minus === '-' || (word !== undefined && word.startsWith('-') && word.length > 1);
    const text = phrase ?? (negated ? word!.slice(1) : word!);
    const tokens = tokenize(text);
    if (tokens.length > 0) items.push({ term: { text, tokens }, negated });
  }
  return items;
}

/** Parses q; an empty query, or one that only excludes, is 400 INVALID_INPUT naming q. */
export function parseQuery(q: string): FtsQuery {
  const query = q.trim();
  if (query === '') throw invalidQuery('must not be empty; give one or more words');
  if (!isStorable(query)) throw invalidQuery(UNSTORABLE_REFUSED);
  if (query.length > MAX_QUERY_LENGTH) throw invalidQuery(`at most ${MAX_QUERY_LENGTH} characters`);
  const items = lex(query);
  const groups: Term[][] = [];
  const excluded: Term[] = [];
  let joinNext = false;
  for (const item of items) {
    if (item === 'OR') {
      joinNext = groups.length > 0;
      continue;
    }
    if (item.negated) excluded.push(item.term);
    else if (joinNext) groups.at(-1)!.push(item.term);
    else groups.push([item.term]);
    joinNext = false;
  }
  if (groups.length === 0) {
    throw invalidQuery(
      excluded.length > 0 ? 'needs at least one word to look for, not only exclusions' : 'has no letters or digits to search for',
    );
  }
  if (groups.flat().length + excluded.length > MAX_QUERY_TERMS) throw invalidQuery(`at most ${MAX_QUERY_TERMS} words and phrases`);
  return { groups, excluded };
}

/** The query written back in its own language, e.g. after a did-you-mean replaced some terms. */
export function formatQuery(query: FtsQuery): string {
  const term = (t: Term) => (t.tokens.length > 1 ? `"${t.tokens.join(' ')}"` : t.tokens[0]!);
  return [...query.groups.map((group) => group.map(term).join(' OR ')), ...query.excluded.map((t) => `-${term(t)}`)].join(' ');
}
