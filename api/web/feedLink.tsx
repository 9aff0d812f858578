import type { VNode } from 'preact';

/** The site-wide Atom feed of confirmed deletions. */
export const DELETIONS_FEED = '/feeds/deletions.atom';
/** A channel's Atom feed of confirmed deletions. */
export const channelDeletionsFeed = (channelId: string) => `/channels/${channelId}/deletions.atom`;

/** `<link rel="alternate">` to an Atom feed, so a feed reader given the page finds it. */
export const FeedLink = ({ href, title }: { href: string; title: string }): VNode => (
  <link rel="alternate" type="application/atom+xml" title={title} href={href} />
);
