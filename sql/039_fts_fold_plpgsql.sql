-- fts_fold as one PL/pgSQL function. A strict SQL function whose body is a CASE is never inlined, so 036's
-- fts_fold ran its fts_space_cjk through the SQL function executor for every text past ASCII: a video's
-- document took 80 µs instead of 021's 59 (30,000 generated videos), and the fts build lost 7-19 %.
-- Here each step runs once, on the text of the step before: 48 µs. The same answers as 021 and 036
-- (test/db/fts-fold.test.ts), so nothing stored changes.
create or replace function fts_fold(value text) returns text
  language plpgsql immutable strict parallel safe as $$
begin
  -- NFKC, the CJK spacing and unaccent never change ASCII text (021); lower case in the C collation
  -- changes ASCII letters only, whatever the database's collation.
  if value !~ '[^\x01-\x7f]' then
    return lower(value collate "C") collate "und-x-icu";
  end if;
  if value is not nfkc normalized then
    value := normalize(value, NFKC);
  end if;
  -- Each CJK character a token of its own: words written without spaces are found as phrases of characters.
  if value ~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]' then
    value := regexp_replace(value, '([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])', ' \1 ', 'g');
  end if;
  return lower(public.unaccent('public.unaccent'::regdictionary, value) collate "und-x-icu");
end $$;

drop function fts_space_cjk(text);
