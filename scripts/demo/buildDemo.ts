/**
 * Builds the demo's archive and its history into a database, through the code real data goes
 * through: the yt-dlp folder is written (./writeArchive.ts) and imported as `afterimage import`
 * imports one (scan, store, subtitles, vocabulary); then the recorded platform
 * (./recordedPlatform.ts) is observed round by round by a real worker: check_status jobs probe its
 * watch pages (the watch-page probe, as STATUS_WATCH_PROBE configures it), record what they saw,
 * confirm deletions at the next round and queue link_reuploads, which links the re-uploads.
 * Only the confirmation delay is shortened (STATUS_CONFIRM_MINUTES=0): rounds are seconds apart,
 * though their answers are dated the recording's days (recordedPlatform.ts).
 * Before the rounds, the administrator is created (as a first start would) and watches the three
 * channels in a watchlist, so what the rounds confirm becomes its changes, as the worker fans them out.
 */
import { rm } from 'node:fs/promises';
import { bootstrapAdmin, type FirstAdmin } from '../../core/accounts/bootstrapAdmin.ts';
import type { Config } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import type { Database } from '../../core/db/openDatabase.ts';
import { refreshSearchWords } from '../../core/fts/postgres.ts';
import { loadArchiveSubtitles } from '../../core/import/loadArchiveSubtitles.ts';
import { storeArchiveScan } from '../../core/import/storeArchiveScan.ts';
import type { Logger } from '../../core/log.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { scheduleAllStatusChecks } from '../../core/status/scheduleChecks.ts';
import { watchlistStream } from '../../core/watchlists/watchlistEvents.ts';
import { insertWatchlist, watchItem } from '../../core/watchlists/watchlists.ts';
import { startWorker } from '../../pipeline/worker.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { ROUNDS, startRecordedPlatform } from './recordedPlatform.ts';
import { writeDemoArchive } from './writeArchive.ts';

/** The longest a round of observation may take before the build gives up (a worker that runs nothing). */
const ROUND_TIMEOUT_MS = 120_000;

export interface DemoFacts {
  builtAt: string;
  videosPerChannel: number;
  channels: Array<{ channelId: string; title: string; handle: string }>;
  files: { infoJson: number; subtitles: number; media: number };
  /** Videos by status after the observation rounds. */
  statuses: Record<string, number>;
  reuploadLinks: number;
  subtitleTracks: number;
  watchPagesServed: number;
  /** The administrator's watchlist of the three channels, and the changes the rounds logged for it. */
  watchlist: { id: string; ownerId: string; name: string; changes: Record<string, number> };
  ms: { archive: number; import: number; observation: number };
}

/** What the build made: its facts (kept in demo.json), and the administrator's key and sign-in link, shown once and kept nowhere. */
export interface DemoBuild {
  facts: DemoFacts;
  firstAdmin: FirstAdmin;
}

export const DEMO_WATCHLIST = 'Demo: three channels';

/** The jobs a round waits for: status checks, re-upload searches, the watched channels' crawls and the fan-out of changes. */
const ROUND_TASKS = ['check_status', 'link_reuploads', 'crawl_channel', 'fan_out_changes'];

/** Waits until none of a round's jobs is left to run. */
async function drained(sql: Sql): Promise<void> {
  const started = Date.now();
  for (;;) {
    const [row] = await sql<{ open: number }[]>`
      select count(*)::int as open from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = any(${ROUND_TASKS}) and j.attempts < j.max_attempts`;
    if (row!.open === 0) return;
    if (Date.now() - started > ROUND_TIMEOUT_MS) {
      throw new Error(
        `the demo's status checks did not finish in ${ROUND_TIMEOUT_MS / 1000} s (${row!.open} jobs left); run with LOG_LEVEL=debug to see why`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function buildDemo(
  db: Database,
  config: Config,
  log: Logger,
  options: { videosPerChannel: number; onStep?: (step: string) => void },
): Promise<DemoBuild> {
  const step = options.onStep ?? (() => {});
  const timer = () => {
    const started = Date.now();
    return () => Date.now() - started;
  };

  let elapsed = timer();
  step(`writing a yt-dlp folder of 3 channels into ${config.archiveDir}`);
  await rm(config.archiveDir, { recursive: true, force: true });
  const archive = await writeDemoArchive(config.archiveDir, options.videosPerChannel);
  const archiveMs = elapsed();

  elapsed = timer();
  step(
    `importing ${archive.files.infoJson} info.json files, ${archive.files.subtitles} subtitle files and ${archive.files.media} media files`,
  );
  const scan = await scanArchive(config.archiveDir);
  const stored = await storeArchiveScan(db.sql, scan, { log });
  const subtitles = await loadArchiveSubtitles(db.sql, stored.storedVideos, log);
  await refreshSearchWords(db.sql);
  const importMs = elapsed();

  elapsed = timer();
  const platform = await startRecordedPlatform(archive.videos);
  const { YOUTUBE_API_KEY: _key, YTDLP_PATH: _ytDlp, ...offline } = config;
  // A round's jobs (50 videos each) run side by side: the recorded platform answers at once.
  const observing: Config = {
    ...offline,
    STATUS_WATCH_PROBE: true,
    YOUTUBE_WEB_URL: platform.url,
    STATUS_CONFIRM_MINUTES: 0,
    WORKER_CONCURRENCY: 8,
  };
  const services = await buildServices(observing, { sql: db.sql, log });
  const channelIds = archive.channels.map((channel) => channel.channelId);
  step(`creating the administrator, and its watchlist "${DEMO_WATCHLIST}" of the 3 channels`);
  const firstAdmin = await bootstrapAdmin(db.sql);
  if (!firstAdmin) throw new Error('the demo is built into a database without users, but this one has users');
  // Presenting needs an origin for the feed URL, which `afterimage demo` prints with the site's at each start.
  const watchlist = await insertWatchlist(db.sql, { serverKey: services.serverKey, origin: '' }, firstAdmin.userId, DEMO_WATCHLIST);
  // Each channel, never crawled in full, is crawled now, as watching one does: from the demo's archive,
  // its only source (the demo configures no YouTube API key and no Wayback Machine), so offline.
  const watching = { sql: db.sql, sources: services.sources, log, sourceWaitBudgetMs: config.SOURCE_WAIT_BUDGET_MS };
  for (const channelId of channelIds) await watchItem(watching, firstAdmin.userId, watchlist.id, { kind: 'channel', channelId });
  const worker = await startWorker(observing, db, log, services);
  try {
    // The crawls end before the first round: the rounds then observe a settled archive.
    await drained(db.sql);
    for (let round = 0; round < ROUNDS; round++) {
      step(`observing the recorded platform: round ${round + 1} of ${ROUNDS}`);
      platform.play(round);
      await scheduleAllStatusChecks(db.sql, { channelIds, priority: 0 });
      await drained(db.sql);
    }
  } finally {
    await worker.stop();
    await platform.close();
  }
  const observationMs = elapsed();

  const statuses = await db.sql<
    { status: string; videos: number }[]
  >`select status, count(*)::int as videos from videos group by status order by status`;
  const [links] = await db.sql<{ links: number }[]>`select count(*)::int as links from videos where reuploaded_as is not null`;
  const changes = await db.sql<{ type: string; changes: number }[]>`
    select type, count(*)::int as changes from events where stream = ${watchlistStream(watchlist.id)} group by type order by type`;
  const facts: DemoFacts = {
    builtAt: new Date().toISOString(),
    videosPerChannel: options.videosPerChannel,
    channels: archive.channels,
    files: archive.files,
    statuses: Object.fromEntries(statuses.map((row) => [row.status, row.videos])),
    reuploadLinks: links!.links,
    subtitleTracks: subtitles.tracks,
    watchPagesServed: platform.served,
    watchlist: {
      id: watchlist.id,
      ownerId: firstAdmin.userId,
      name: watchlist.name,
      changes: Object.fromEntries(changes.map((row) => [row.type, row.changes])),
    },
    ms: { archive: archiveMs, import: importMs, observation: observationMs },
  };
  return { facts, firstAdmin };
}
