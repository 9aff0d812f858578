-- Public pages and sitemaps get a per-minute budget of their own, sized for crawlers: a search engine
-- following /sitemap.xml from one address no longer shares the 30 API requests a minute of the
-- anonymous tier (answers 304 Not Modified count nothing at all, see api/REFERENCE.md).
insert into limit_definitions (name, description, unit, window_kind, window_seconds, counted_per) values
  ('pageRequestsPerMinute', 'Public page and sitemap requests per minute (summary pages, /sitemap.xml)', 'page requests', 'sliding', 60, 'user');

insert into tier_limits (tier, limit_name, max_count)
select name, 'pageRequestsPerMinute', 600 from tiers;
