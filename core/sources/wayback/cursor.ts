/**
 * The opaque cursor of the Wayback source's listVideos (where the walk of listing captures stopped,
 * what is queued for lookup), and the listing-URL forms of a channel that walk goes through.
 */
import { decodeURIComponentSafe } from '../../text/decodeUriComponentSafe.ts';
import { DefiniteError } from '../httpErrors.ts';
import type { ChannelRecord } from '../types.ts';

/** A listing-URL form walked with the CDX: "p:" prefix or "e:" exact match, then the URL. */
export type Form = string;

export interface PendingVideo {
  /** video id */
  i: string;
  /** 1: listed as this channel's (uploads tab or byline) */
  o?: 1;
  /** title the listing gave */
  t?: string;
  /** duration (s) the listing gave */
  d?: number;
  /** index into CursorState.c: the listing capture it was found in */
  c?: number;
  /** transient failures so far */
  r?: number;
}

export interface CursorState {
  v: 1;
  /** listing-URL forms to walk, in order */
  f: Form[];
  /** index of the form being walked */
  i: number;
  /** CDX resume key of the current page of that form (absent on its first page) */
  k?: string;
  /** position ("urlkey timestamp") of the last row of the current page already read */
  a?: string;
  /** ids found but not yet looked up */
  p: PendingVideo[];
  /** ids already queued in this walk, 11 characters each, oldest first */
  s: string;
  /** listing captures ("timestamp original") pending videos were found in */
  c: string[];
  /** digests of the listing captures read last (identical captures under other URLs are skipped) */
  g: string[];
}

const CURSOR_PREFIX = 'wb1.';

export function encodeCursor(state: CursorState): string {
  // Drop listing-capture refs no pending video uses any more, renumbering the rest.
  const used = [...new Set(state.p.map((entry) => entry.c).filter((c): c is number => c !== undefined))].sort((x, y) => x - y);
  const renumber = new Map(used.map((old, index) => [old, index]));
  const compact: CursorState = {
    ...state,
    c: used.map((index) => state.c[index]!),
    p: state.p.map((entry) => (entry.c === undefined ? entry : { ...entry, c: renumber.get(entry.c)! })),
  };
  return CURSOR_PREFIX + Buffer.from(JSON.stringify(compact)).toString('base64url');
}

export function decodeCursor(cursor: string): CursorState {
  const invalid = () => new DefiniteError('not a cursor of the wayback source', 400);
  if (!cursor.startsWith(CURSOR_PREFIX)) throw invalid();
  let state: unknown;
  try {
    state = JSON.parse(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const s = state as Partial<CursorState>;
  if (!s || s.v !== 1 || !Array.isArray(s.f) || typeof s.i !== 'number' || !Array.isArray(s.p) || typeof s.s !== 'string') throw invalid();
  return { v: 1, f: s.f, i: s.i, k: s.k, a: s.a, p: s.p, s: s.s, c: Array.isArray(s.c) ? s.c : [], g: Array.isArray(s.g) ? s.g : [] };
}

/** The listing-URL forms of a channel, most canonical first. */
export function listingForms(channel: ChannelRecord): Form[] {
  const forms: Form[] = [`p:youtube.com/channel/${channel.channelId}`];
  const names = new Set<string>();
  const addName = (path: string) => {
    const key = path.toLowerCase();
    if (names.has(key)) return;
    names.add(key);
    // The exact page and its sub-pages; a bare prefix would also match longer names.
    forms.push(`e:youtube.com/${path}`, `p:youtube.com/${path}/`);
  };
  const handle = channel.handle?.replace(/^@?/, '@');
  if (handle && handle.length > 1) addName(handle);
  const custom = channel.customUrl?.trim();
  if (custom) {
    if (custom.startsWith('@')) addName(custom);
    else {
      const name = custom.replace(/^\/?(?:c\/|user\/)?/i, '');
      if (name) {
        addName(`user/${name}`);
        addName(`c/${name}`);
        addName(name);
      }
    }
  }
  return forms;
}

/** Pages of `forms` this form's path covers: the tab after the base, lower-cased, or undefined if outside. */
export function tabOf(form: Form, original: string, channelId: string): string | undefined {
  const base = form.slice(2).replace(/\/$/, '');
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(original) ? original : `http://${original}`);
  } catch {
    return undefined;
  }
  const basePath = base.slice(base.indexOf('/'));
  const path = decodeURIComponentSafe(url.pathname).replace(/\/+$/, '');
  if (form.startsWith('p:youtube.com/channel/')) {
    // The index is case-insensitive; channel ids are not.
    if (!path.startsWith(`/channel/${channelId}`)) return undefined;
  } else if (!path.toLowerCase().startsWith(basePath.toLowerCase())) return undefined;
  const rest = path.slice(basePath.length);
  if (rest && !rest.startsWith('/')) return undefined;
  return (rest.split('/')[1] ?? '').toLowerCase();
}
