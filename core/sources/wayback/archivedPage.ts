/**
 * Reading archived pages of any kind: visible text, the Wayback's URL rewriting, head tags
 * (meta/link), titles, counts, dates and thumbnails as the platform printed them over the years.
 */
import { decodeEntities } from '../../text/entities.ts';
import { asObject, asString } from '../../youtube/json.ts';

/** Visible text of an HTML fragment: <br> become line breaks, tags go, entities are decoded. */
export function htmlToText(fragment: string): string {
  const text = fragment
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(?:p|div|li)>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/[ \t\r\f\v]+/g, ' ');
  return decodeEntities(text)
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Strips the Wayback's rewriting ("https://web.archive.org/web/2020…im_/https://i.ytimg.com/…"). */
export function unwrapArchiveUrl(url: string): string {
  let value = url.trim();
  for (let i = 0; i < 3; i++) {
    const match = /^(?:https?:)?(?:\/\/web\.archive\.org)?\/web\/\d{1,14}[a-z]{0,3}_?\/(.+)$/i.exec(value);
    if (!match) break;
    value = match[1]!;
  }
  if (value.startsWith('//')) value = `https:${value}`;
  return value;
}

/** The attributes of one tag, names lower-cased, values decoded; the first of a repeated name wins. */
export function attributes(tag: string): Record<string, string> {
  const result: Record<string, string> = {};
  const pattern = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g;
  for (const match of tag.matchAll(pattern)) {
    const name = match[1]!.toLowerCase();
    if (!(name in result)) result[name] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? '');
  }
  return result;
}

export type HeadTag = Record<string, string> & { tag: string };

/** Every `<meta>` and `<link>` tag of a page, as attribute maps. */
export function headTags(html: string): HeadTag[] {
  const tags: HeadTag[] = [];
  for (const match of html.matchAll(/<(meta|link)\b[^>]*>/gi)) tags.push({ ...attributes(match[0]), tag: match[1]!.toLowerCase() });
  return tags;
}

/** The `content` of every `<meta KEY="value">`, in page order. */
export function metaValues(tags: HeadTag[], key: 'name' | 'property' | 'itemprop', value: string): string[] {
  const out: string[] = [];
  for (const tag of tags) if (tag.tag === 'meta' && tag[key]?.toLowerCase() === value && tag.content !== undefined) out.push(tag.content);
  return out;
}

/** The `href` of the first `<link KEY="value">`. */
export function linkHref(tags: HeadTag[], key: 'rel' | 'itemprop', value: string): string | undefined {
  return tags.find((tag) => tag.tag === 'link' && tag[key]?.toLowerCase() === value && tag.href)?.href;
}

const GENERIC_TITLES =
  /^(?:youtube|-?\s*youtube|broadcast yourself\.?|youtube - broadcast yourself\.?|before you continue(?: to youtube)?|404 not found|error 404.*)$/i;

/** A page title without the site's name; undefined for generic titles ("YouTube", error pages). */
export function cleanTitle(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const title = decodeEntities(value)
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\s*-\s*YouTube$/i, '')
    .replace(/^YouTube\s*-\s*/i, '')
    .trim();
  return title && !GENERIC_TITLES.test(title) ? title : undefined;
}

/** A count as pages print it ("1,234,567", "1 234"), or as a JSON number. */
export function toInt(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const digits = value.replace(/[,.\s\u00a0\u202f]/g, '');
  if (!/^\d{1,16}$/.test(digits)) return undefined;
  const number = Number(digits);
  return Number.isSafeInteger(number) ? number : undefined;
}

/** "4:13", "1:02:03" (lengthText of listings) to seconds. */
export function parseClockDuration(value: string | undefined): number | undefined {
  if (!value || !/^\d{1,3}(?::\d{1,2}){1,2}$/.test(value.trim())) return undefined;
  return value
    .trim()
    .split(':')
    .reduce((total, part) => total * 60 + Number(part), 0);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** YYYY-MM-DD from "2022-08-04T12:59:59-07:00", "2012-05-21", "May 21, 2012" or "21 May 2012". */
export function normaliseDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const text = value.trim();
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])/.exec(text);
  if (iso) return valid(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  const us = /^([A-Za-z]{3,9})\.? (\d{1,2}),? (\d{4})$/.exec(text);
  if (us) return valid(Number(us[3]), MONTHS.indexOf(us[1]!.slice(0, 3).toLowerCase()) + 1, Number(us[2]));
  const eu = /^(\d{1,2}) ([A-Za-z]{3,9})\.? (\d{4})$/.exec(text);
  if (eu) return valid(Number(eu[3]), MONTHS.indexOf(eu[2]!.slice(0, 3).toLowerCase()) + 1, Number(eu[1]));
  return undefined;

  function valid(year: number, month: number, day: number): string | undefined {
    if (year < 2005 || year > 2100 || month < 1 || month > 12 || day < 1 || day > 31) return undefined;
    const date = new Date(Date.UTC(year, month - 1, day));
    if (date.getUTCDate() !== day) return undefined;
    return date.toISOString().slice(0, 10);
  }
}

/** The widest of a `{thumbnails: [{url, width}]}` list, unwrapped from the Wayback's rewriting. */
export function bestThumbnail(value: unknown): string | undefined {
  const list = asObject(value)?.thumbnails;
  if (!Array.isArray(list)) return undefined;
  let best: { url: string; width: number } | undefined;
  for (const entry of list) {
    const object = asObject(entry);
    const url = asString(object?.url);
    if (!url) continue;
    const width = typeof object?.width === 'number' ? object.width : 0;
    if (!best || width >= best.width) best = { url, width };
  }
  return best ? unwrapArchiveUrl(best.url) : undefined;
}
