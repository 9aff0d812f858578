-- The planner reads the fts column's most common lexemes for every search statement it plans, and the
-- service plans each one afresh (plan_cache_mode). Statistics of 1000 kept 10,000 lexemes: 1.2 ms of
-- planning per statement at a million videos, where executing a rare word's took 0.03 ms. 100 keeps the
-- 1,000 most common, every word in more than about 0.5 % of videos, and the plans need no more: they
-- tell a broad query from a rare one at 1 % (core/fts/postgres.ts, ALL_MATCHES_CAP).
alter table videos alter column fts set statistics 100;
analyze videos (fts);
