-- Re-upload candidates: a similar title AND a duration within seconds. One GiST index answers both at
-- once; the trigram index alone reads every row of formulaic titles ("Episode 12 | …"), and the duration
-- alone leaves thousands of rows to compare.
create extension if not exists btree_gist;
create index videos_duration_title on videos using gist (duration_seconds, lower(title) gist_trgm_ops);
drop index videos_title_trgm;
