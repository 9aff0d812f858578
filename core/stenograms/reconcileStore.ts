import type { Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { StenogramStore } from './store.ts';

/** Younger files and rows are left alone: a generation writes its file a moment before its row says generated. */
const GRACE_MINUTES = 10;
/**
 * A listing holding fewer than this share of the files the generated rows say it holds is a store
 * problem (unmounted, a partial or failing listing), not crashes, which lose one file at a time: the run does nothing.
 */
const LEAST_SHARE_LISTED = 0.5;
/** An orphan file is removed once it was orphaned in this many consecutive runs, and first seen at least ORPHAN_HOURS ago. */
const ORPHAN_RUNS = 3;
const ORPHAN_HOURS = 2;

export interface ReconcileOutcome {
  /** Why nothing was done (the listing looked wrong), or undefined. */
  refused?: string;
  rowsMarkedMissing: number;
  rowsFoundAgain: number;
  orphansWaiting: number;
  orphanFilesRemoved: number;
}

/**
 * After a crash between a row and its file. Never deletes a row: generated rows whose file is not
 * listed are marked file_missing_since (cleared when it is listed again). Removes a file only when no
 * row of any state refers to it and it was orphaned in ORPHAN_RUNS consecutive runs (stenogram_orphans).
 * A listing error aborts with no change; a listing that is empty or shrank sharply against the rows
 * changes nothing either. Only what is older than GRACE_MINUTES counts, so work in flight is never touched.
 */
export async function reconcileStenogramStore(sql: Sql, store: StenogramStore, log: Logger): Promise<ReconcileOutcome> {
  const [clock] = await sql<{ cutoff: Date }[]>`select now() - make_interval(mins => ${GRACE_MINUTES}) as cutoff`;
  const cutoff = clock!.cutoff;
  // The whole listing first: an error part way (a thrown list) must leave everything as it was.
  const listed = new Map<string, { userId: string; videoId: string; modifiedAt: Date }>();
  for await (const document of store.list()) listed.set(`${document.userId}/${document.videoId}`, document);

  const generated = await sql<{ id: string; ownerId: string; videoId: string; missing: boolean }[]>`
    select id::text as id, owner_id::text as "ownerId", video_id as "videoId", file_missing_since is not null as missing
    from stenograms where status = 'generated' and generated_at < ${cutoff}`;
  const absent = generated.filter((row) => !listed.has(`${row.ownerId}/${row.videoId}`));
  const present = generated.length - absent.length;
  if (generated.length > 0 && present < generated.length * LEAST_SHARE_LISTED) {
    const refused =
      present === 0
        ? `the store listed none of the ${generated.length} generated stenograms' files (${listed.size} files in all)`
        : `the store listed only ${present} of the ${generated.length} generated stenograms' files, under ${LEAST_SHARE_LISTED * 100}%`;
    log.warn(
      `stenogram reconciling refused: ${refused}; nothing was marked or removed. Check that ${store.location} is mounted or reachable and lists completely`,
      { store: store.location },
    );
    return { refused, rowsMarkedMissing: 0, rowsFoundAgain: 0, orphansWaiting: 0, orphanFilesRemoved: 0 };
  }

  const newlyAbsent = absent.filter((row) => !row.missing).map((row) => row.id);
  const foundAgain = generated.filter((row) => row.missing && listed.has(`${row.ownerId}/${row.videoId}`)).map((row) => row.id);
  if (newlyAbsent.length)
    await sql`update stenograms set file_missing_since = now() where id = any(${newlyAbsent}::bigint[]) and file_missing_since is null`;
  if (foundAgain.length) await sql`update stenograms set file_missing_since = null where id = any(${foundAgain}::bigint[])`;
  for (const row of absent.filter((row) => !row.missing))
    log.warn('stenogram file missing: row marked, kept', { userId: row.ownerId, videoId: row.videoId, store: store.location });

  const orphans = await orphanFiles(
    sql,
    [...listed.values()].filter((document) => document.modifiedAt <= cutoff),
  );
  const due = await trackOrphans(sql, store.location, orphans);
  let orphanFilesRemoved = 0;
  for (const orphan of due) {
    // A generation may have started since the look above; its row keeps the file.
    if ((await orphanFiles(sql, [orphan])).length === 0) continue;
    await store.delete(orphan.userId, orphan.videoId);
    await sql`delete from stenogram_orphans where store = ${store.location} and owner_id = ${orphan.userId}::uuid and video_id = ${orphan.videoId}`;
    log.warn('stenogram orphan file removed', { userId: orphan.userId, videoId: orphan.videoId, store: store.location });
    orphanFilesRemoved++;
  }
  return {
    rowsMarkedMissing: newlyAbsent.length,
    rowsFoundAgain: foundAgain.length,
    orphansWaiting: orphans.length - orphanFilesRemoved,
    orphanFilesRemoved,
  };
}

/** The documents no stenogram row of any state refers to. */
async function orphanFiles(sql: Sql, documents: { userId: string; videoId: string }[]): Promise<{ userId: string; videoId: string }[]> {
  if (documents.length === 0) return [];
  return sql<{ userId: string; videoId: string }[]>`
    select d.user_id as "userId", d.video_id as "videoId"
    from unnest(${documents.map((d) => d.userId)}::text[], ${documents.map((d) => d.videoId)}::text[]) as d (user_id, video_id)
    where not exists (select 1 from stenograms g where g.owner_id = d.user_id::uuid and g.video_id = d.video_id)`;
}

/** Counts this run for each orphan, forgets those no longer orphaned, and answers those due for removal. */
async function trackOrphans(sql: Sql, store: string, orphans: { userId: string; videoId: string }[]) {
  return sql.begin(async (tx) => {
    const users = orphans.map((o) => o.userId);
    const videos = orphans.map((o) => o.videoId);
    await tx`
      delete from stenogram_orphans o where o.store = ${store}
        and not exists (select 1 from unnest(${users}::uuid[], ${videos}::text[]) as d (user_id, video_id) where d.user_id = o.owner_id and d.video_id = o.video_id)`;
    const counted = await tx<{ userId: string; videoId: string; due: boolean }[]>`
      insert into stenogram_orphans as o (store, owner_id, video_id)
      select ${store}, user_id, video_id from unnest(${users}::uuid[], ${videos}::text[]) as d (user_id, video_id)
      on conflict (store, owner_id, video_id) do update set runs = o.runs + 1
      returning owner_id::text as "userId", video_id as "videoId", runs >= ${ORPHAN_RUNS} and first_seen_at <= now() - make_interval(hours => ${ORPHAN_HOURS}) as due`;
    return counted.filter((orphan) => orphan.due);
  });
}
