-- A phrase is checked against the search document (fts) of every video holding all its words (GIN keeps
-- no positions). The document is usually the row's largest value, so in a row over the TOAST threshold
-- (about 2 KB; 12 % of generated videos) Postgres stored it out of line, and reading it back cost twice
-- the rest of the check (200,000 videos, "vk www": 12,617 videos hold both words, 638 the phrase; 127 ms
-- to check them, 40 ms with every document in its row). Stored `main`, the document stays in the row
-- and the description goes out of line instead; no search reads the description.
alter table videos alter column fts set storage main;

-- Rows written before keep their document out of line until rewritten. The rows over the threshold
-- (their whole-row size counts every value in full) are written again, recomputing the document in
-- place; triggers stay off meanwhile, since nothing about those videos changes (no updated_at, no status
-- history, no Typesense sync).
alter table videos disable trigger user;
update videos set title = title where pg_column_size(videos.*) > 1900;
alter table videos enable trigger user;
