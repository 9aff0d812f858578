-- The key of a crawl's one queued step (crawl_channel job). A step's transaction commits before
-- graphile-worker marks its job done, so a worker lost between the two runs the step again; the
-- repeat finds another step queued (or none) and writes nothing, instead of storing its batch,
-- counting its videos and queuing the steps after it a second time. Null for crawls queued before
-- this column: their steps are taken as queued.
alter table crawls add column queued_step text;
