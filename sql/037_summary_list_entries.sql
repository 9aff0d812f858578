-- Every list of public summaries is an index range scan in the list's own order (issue 32.4). The GIN
-- index of tags found a tag's summaries but not newest first: the planner sorted every match (a common
-- tag within a language: 224 ms at 100,000 summaries) or walked the newest summaries hoping for the tag,
-- and a deep page read and skipped 10,000 wide rows. Now a public generated summary has a narrow row per
-- list it is in: one for the lists without a tag (tag '', as summary_facets' language '' is every
-- language) and one per tag, with the columns the lists filter and sort by; one btree per combination
-- of filters, each ending in the order, so a page is the range's next rows and a skipped row is an
-- index entry. The summary's own row is read for the page only.
create table summary_list_entries (
  summary_id bigint not null,
  tag text not null,
  language text not null,
  channel_id text not null,
  generated_at timestamptz not null
);

-- The entries of one summary: none unless it is public and generated.
create function summary_list_rows(s summaries)
returns table (summary_id bigint, tag text, language text, channel_id text, generated_at timestamptz)
language sql immutable as $$
  select s.id, t.tag, s.language, s.channel_id, s.generated_at
  from (select '' union select unnest(s.tags)) as t (tag)
  where s.status = 'generated' and not s.private
$$;

-- A deleted summary's entries go with it (the foreign key below); a change of what the lists read rewrites them.
create function maintain_summary_list_entries() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' then
    if (old.status, old.private, old.tags, old.language, old.channel_id, old.generated_at)
      is not distinct from (new.status, new.private, new.tags, new.language, new.channel_id, new.generated_at) then
      return null;
    end if;
    delete from summary_list_entries where summary_id = old.id;
  end if;
  insert into summary_list_entries select * from summary_list_rows(new);
  return null;
end $$;
-- Created first: its lock holds writes to summaries until this migration commits, so none is missed below.
create trigger summaries_list_entries after insert or update of status, private, tags, language, channel_id, generated_at on summaries
  for each row execute function maintain_summary_list_entries();

-- The existing summaries' entries, then the constraints and indexes, each built from all the rows at once.
insert into summary_list_entries
select r.* from summaries s cross join summary_list_rows(s) r where s.status = 'generated' and not s.private;
alter table summary_list_entries
  add primary key (summary_id, tag),
  add foreign key (summary_id) references summaries (id) on delete cascade;
create index summary_list_entries_newest on summary_list_entries (tag, generated_at desc, summary_id desc);
create index summary_list_entries_language on summary_list_entries (tag, language, generated_at desc, summary_id desc);
create index summary_list_entries_channel on summary_list_entries (tag, channel_id, generated_at desc, summary_id desc);
create index summary_list_entries_channel_language on summary_list_entries (tag, channel_id, language, generated_at desc, summary_id desc);
analyze summary_list_entries;

-- The lists read the entries now. The sitemap reads public summaries oldest first with their video ids,
-- a file of 50,000 from the index alone (and a second file skips the first's entries, not their rows).
drop index summaries_public_latest, summaries_public_tags, summaries_public_language, summaries_public_channel;
create index summaries_sitemap on summaries (generated_at, id) include (video_id) where status = 'generated' and not private;

-- A user's private summaries, newest requested first (the account page), without sorting them all.
create index summaries_private_requested on summaries (owner_id, requested_at desc, id desc) where private;
