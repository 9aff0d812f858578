/**
 * The groups of the OpenAPI document, in the order the docs page shows them, each with what it
 * holds. Every tag of the API's routes is one of them (test/api/openapi-lint.test.ts checks it).
 */
export const apiTags = {
  System: "Health, the caller's tier and usage, the tiers, this document and its page (/api/docs)",
  'Channel search':
    "Find a channel's videos, deleted ones included: start a search, follow it as Server-Sent Events, continue into the archive",
  'Full-text search': 'Search the titles, tags and descriptions of every stored video, or what is said in their subtitles',
  Subtitles: 'Subtitle tracks as SRT, WebVTT or text; fetching them on demand; bulk downloads as JSON or a zip',
  'AI summaries': 'Public summaries of videos written by an LLM from their subtitles: read, list, generate, follow',
  'AI stenograms': 'Private, complete transcripts rewritten as Markdown, readable only by the key owner who asked for them',
  'Event streams': "Short-lived tokens that open one event stream without the API key, for a browser's EventSource",
  'Public pages': 'HTML pages of public summaries and their sitemaps, for people and crawlers (outside /api)',
  'Video status': "A video's status (public, private, deleted, …) and every change of it",
  Watchlists:
    'Named lists of channels, videos and saved full-text queries you watch, and the log of their changes: a page at a time, live, or as a private Atom feed',
  Feeds: 'Atom feeds of confirmed deletions, site-wide and per channel, and of a watchlist at its private URL',
  'Video files': 'Media files of the local archive, with byte ranges and validators',
  Webhooks: "A watchlist's changes POSTed to your receivers, signed per Standard Webhooks: endpoints, test events, the delivery log",
  'AI assistants (MCP)': 'The Model Context Protocol server: the same data, quotas and access rules for AI assistants',
} as const;
