/**
 * Atom feeds (RFC 4287) of the change log: the deletions feeds and a watchlist's private feed. Each
 * entry is one change as core/watchlists/change.ts presents it, its id derived from the change's id
 * alone, so a reader sees the same entry on every page and in every later request. Paging is RFC 5005's
 * (`next` links).
 */
import { escapeHtml } from '../text/escapeHtml.ts';
import type { Change } from './change.ts';

export const ATOM_TYPE = 'application/atom+xml; charset=utf-8';
/** Entries per page of a feed. */
export const ATOM_PAGE_SIZE = 50;

// XML 1.0 allows no other control characters (not even as references), nor unpaired surrogates, U+FFFE or U+FFFF.
const NOT_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text as XML character data or a quoted attribute: what XML cannot hold becomes U+FFFD, the rest is escaped. */
const xmlText = (text: string) => escapeHtml(text.replace(NOT_XML, '\uFFFD'));

/** What a feed says about itself; URLs absolute. */
export interface FeedHead {
  /** Its atom:id, the same for all its pages (RFC 5005: a page's id is its feed's). */
  id: string;
  title: string;
  /** This page's URL. */
  self: string;
  /** The page for people the feed stands for, if any. */
  alternate?: string;
  /** The next (older) page, when there is one. */
  next?: string;
  /** When the feed was created, for an `updated` of a feed with no entries. */
  since: Date;
}

/**
 * A tag: URI (RFC 4151) under the public origin's host: an id readers keep, unchanged by the page or
 * path it was read at. `specific` names what it identifies (`change:123`, `deletions`).
 */
export const atomId = (origin: string, specific: string) => `tag:${new URL(origin).hostname.replace(/^\[|\]$/g, '')},2026:${specific}`;

const quoted = (text: string) => `“${text}”`;
const capitalised = (text: string) => text[0]!.toUpperCase() + text.slice(1);

/** What the entry's title says happened; `queryText` is the saved query's q of a new match. */
export function changeTitle(change: Change, queryText?: string): string {
  const title = change.title ?? `video ${change.videoId}`;
  const reason = change.status?.reasonText ? ` — ${change.status.reasonText}` : '';
  switch (change.type) {
    case 'video.deleted':
      return `Deleted: ${title}${reason}`;
    case 'video.reuploaded':
      return `Re-uploaded: ${title}${reason}`;
    case 'video.restored':
      return `Restored: ${title} — live again (was ${change.status?.previousStatus ?? 'deleted'})`;
    case 'video.metadata_changed': {
      const metadata = change.metadata!;
      if (metadata.changed.includes('title'))
        return `Title changed: ${quoted(metadata.before.title ?? '')} → ${quoted(metadata.after.title ?? '')}`;
      return `${capitalised(metadata.changed.join(', '))} changed: ${title}`;
    }
    case 'channel.video_added':
      return `New upload: ${title}`;
    case 'query.new_match':
      return `New match for ${quoted(queryText ?? `saved query ${change.savedQueryId}`)}: ${title}`;
  }
}

/** The entry's content: what a reader needs to judge the change without opening the video's page (HTML, escaped again as the element's text). */
function changeContent(change: Change, origin: string): string {
  const rows: [string, string][] = [];
  if (change.status) {
    rows.push(['Status', `${change.status.status} (previously ${change.status.previousStatus})`]);
    if (change.status.reasonText) rows.push(['Reason', change.status.reasonText]);
    if (change.status.claimant) rows.push(['Claimant', change.status.claimant]);
    if (change.status.linkedVideoId) rows.push(['Linked video', `${origin}/videos/${change.status.linkedVideoId}`]);
  }
  if (change.evidence?.source || change.evidence?.text)
    rows.push(['Evidence', [change.evidence.source, change.evidence.text].filter(Boolean).join(': ')]);
  if (change.metadata) {
    for (const field of change.metadata.changed) {
      const key = field === 'thumbnail' ? 'thumbnailUrl' : field;
      const show = (values: typeof change.metadata.before) => {
        const value = values[key as keyof typeof values];
        return Array.isArray(value) ? value.join(', ') : (value ?? '');
      };
      rows.push([`${capitalised(field)} before`, show(change.metadata.before)], [`${capitalised(field)} now`, show(change.metadata.after)]);
    }
  }
  rows.push(
    ['Observed', new Date(change.happenedAt).toISOString()],
    ['Video', `${origin}/videos/${change.videoId}`],
    ['Channel', `${origin}/channels/${change.channelId}`],
  );
  return `<dl>${rows.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`).join('')}</dl>`;
}

function entry(change: Change, origin: string, queryText: string | undefined): string {
  return `<entry>
<id>${xmlText(atomId(origin, `change:${change.id}`))}</id>
<title>${xmlText(changeTitle(change, queryText))}</title>
<updated>${new Date(change.recordedAt).toISOString()}</updated>
<published>${new Date(change.happenedAt).toISOString()}</published>
<link rel="alternate" type="text/html" href="${xmlText(`${origin}/videos/${change.videoId}`)}"/>
<category term="${xmlText(change.type)}"/>
<content type="html">${xmlText(changeContent(change, origin))}</content>
</entry>`;
}

/** When a page of the feed last changed: its newest entry's logging, else when the feed began. */
const feedUpdated = (head: Pick<FeedHead, 'since'>, changes: readonly Change[]) =>
  new Date(changes.reduce((latest, change) => Math.max(latest, Date.parse(change.recordedAt)), head.since.getTime()));

/** A page of a feed, newest entry first. `queries` gives the q of each saved query a new match names. */
export function renderAtomFeed(
  head: FeedHead,
  origin: string,
  changes: readonly Change[],
  queries: ReadonlyMap<string, string> = new Map(),
): string {
  const links = [
    `<link rel="self" type="application/atom+xml" href="${xmlText(head.self)}"/>`,
    head.alternate ? `<link rel="alternate" type="text/html" href="${xmlText(head.alternate)}"/>` : '',
    head.next ? `<link rel="next" type="application/atom+xml" href="${xmlText(head.next)}"/>` : '',
  ].filter(Boolean);
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>${xmlText(head.id)}</id>
<title>${xmlText(head.title)}</title>
<updated>${feedUpdated(head, changes).toISOString()}</updated>
<author><name>Afterimage</name></author>
<generator>Afterimage</generator>
${links.join('\n')}
${changes.map((change) => entry(change, origin, change.savedQueryId ? queries.get(change.savedQueryId) : undefined)).join('\n')}
</feed>
`;
}
