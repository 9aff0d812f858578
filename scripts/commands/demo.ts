/**
 * `afterimage demo` (`npm run demo`): a service to try everything on, offline. The first run builds
 * a demo archive in its own data directory (scripts/demo/buildDemo.ts): its own embedded database,
 * a yt-dlp folder of three channels, and the statuses a recorded platform was observed to give.
 * Later runs start the service on what was built; --fresh builds it again. At every start, a local
 * webhook receiver (scripts/demo/demoWebhook.ts) receives the demo watchlist's deliveries.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { databaseLocation, sameDatabase } from '../../core/db/databaseLocation.ts';
import { runningServices } from '../../core/db/runningServices.ts';
import type { FirstAdmin } from '../../core/accounts/bootstrapAdmin.ts';
import { findOwnWatchlist, watchlistFeedPath } from '../../core/watchlists/ownWatchlist.ts';
import { commandLogger, parseOptions, setup, UsageError, withDatabase } from '../cli.ts';
import { buildDemo, type DemoFacts } from '../demo/buildDemo.ts';
import { startDemoReceiver } from '../demo/demoWebhook.ts';
import { serve } from './service.ts';

const USAGE = `usage: npx afterimage demo [--fresh] [--dir DIR] [--videos N]   (npm run demo)
builds a demo archive (3 channels, deleted and re-uploaded videos, subtitles, media) offline, then starts the service on it
  --dir DIR     where the demo lives (default ./.afterimage-demo): its database, archive and stenograms
  --fresh       build it again (the demo's database and folder are deleted first)
  --videos N    downloaded videos per channel, 10 to 1000 (default 100; takes effect when it is built)`;

/**
 * Settings the demo ignores, so that it stays on this machine and in its own directory: another
 * database, archive, upstream or index would mix the demo with real data or reach the network.
 */
const IGNORED_SETTINGS = [
  'DATA_DIR',
  'DATABASE_URL',
  'ARCHIVE_DIR',
  'YOUTUBE_API_KEY',
  'WAYBACK_ENABLED',
  'YOUTUBE_CAPTIONS',
  'STATUS_WATCH_PROBE',
  'YTDLP_PATH',
  'TYPESENSE_URL',
  'LLM_BASE_URL',
  'STENOGRAM_STORE',
];
const MARKER = 'demo.json';
const ADMIN = 'admin@afterimage.localhost';

export async function demoCommand(args: string[]): Promise<void> {
  const { values } = parseOptions(
    args,
    { fresh: { type: 'boolean' }, dir: { type: 'string' }, videos: { type: 'string' } },
    { usage: USAGE },
  );
  const videosPerChannel = values.videos === undefined ? 100 : Number(values.videos);
  if (!Number.isInteger(videosPerChannel) || videosPerChannel < 10 || videosPerChannel > 1000) {
    throw new UsageError(`--videos ${values.videos}: expected a whole number from 10 to 1000\n${USAGE}`);
  }
  const dir = resolve(values.dir ?? './.afterimage-demo');
  const ignored = IGNORED_SETTINGS.filter((name) => process.env[name]);
  for (const name of IGNORED_SETTINGS) delete process.env[name];
  process.env.DATA_DIR = dir;
  // The demo's webhook receiver listens on 127.0.0.1, which webhooks may reach only when allowed.
  process.env.WEBHOOK_ALLOW_PRIVATE = 'true';
  const say = (line: string) => process.stdout.write(`${line}\n`);
  if (ignored.length) say(`demo: ignoring ${ignored.join(', ')}: the demo uses only ${dir} and nothing outside this machine`);

  const marker = join(dir, MARKER);
  const built = await readFile(marker, 'utf8').then(
    (text) => JSON.parse(text) as DemoFacts,
    () => undefined,
  );
  let facts = built;
  let firstAdmin: FirstAdmin | undefined;
  if (built && !values.fresh) {
    say(`demo: using the demo archive built ${built.builtAt} in ${dir} (--fresh builds it again)`);
    say(
      `demo: its administrator (${ADMIN}) got its key at the demo's first start; a new one, which replaces (revokes) that key: npx afterimage keys create --data-dir ${dir} --user ${ADMIN} --scope L4`,
    );
  } else {
    const database = databaseLocation(setup().config);
    const running = (await runningServices()).find((service) => sameDatabase(service.database, database));
    if (running)
      throw new UsageError(`a service (${running.role}, pid ${running.pid}) runs on ${dir}: stop it before building the demo again`);
    // A build that stopped half-way left no marker: it starts again from nothing too.
    await rm(dir, { recursive: true, force: true });
    const started = Date.now();
    const { config } = setup();
    // The build's own worker reports on the lines below; its JSON log only says what went wrong.
    const log = commandLogger(config, config.LOG_LEVEL === 'debug' ? 'debug' : 'warn');
    const build = await withDatabase((db) => buildDemo(db, config, log, { videosPerChannel, onStep: (step) => say(`demo: ${step}`) }));
    ({ facts, firstAdmin } = build);
    await writeFile(marker, `${JSON.stringify(facts, null, 2)}\n`);
    const statuses = Object.entries(facts.statuses)
      .map(([status, videos]) => `${videos} ${status}`)
      .join(', ');
    say(
      `demo: built in ${((Date.now() - started) / 1000).toFixed(1)} s: ${facts.channels.length} channels, ${statuses}; ` +
        `${facts.reuploadLinks} re-uploads linked, ${facts.subtitleTracks} subtitle tracks, ${facts.files.media} media files`,
    );
  }
  say('demo: starting the service (Ctrl-C stops it; `npx afterimage demo` again starts it on the same archive)');
  const serving = await serve({ api: true, worker: true }, { firstAdmin });
  if (!serving) return; // stopped while starting
  const { config } = setup();
  const site =
    config.PUBLIC_URL?.replace(/\/$/, '') ?? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${config.PORT}`;
  // A demo built before it had a watchlist, or whose watchlist was deleted, has none to show.
  const watchlist = facts!.watchlist && (await findOwnWatchlist(serving.sql, facts!.watchlist.ownerId, facts!.watchlist.id));
  const watching = watchlist
    ? [
        `  ${site}/watchlists   the watchlist "${watchlist.name}" (sign in as ${ADMIN}) and its webhook's delivery log`,
        `  ${site}${watchlistFeedPath(serving.serverKey, watchlist)}   its private Atom feed of changes`,
        `  ${site}/feeds/deletions.atom   every confirmed deletion, as an Atom feed`,
        "  Webhook deliveries to the demo's local receiver are printed here, each verified with `standardwebhooks`.",
      ]
    : ['  (no demo watchlist: `npx afterimage demo --fresh` builds the demo again with one)'];
  say(
    [
      '',
      'Try the demo:',
      ...facts!.channels.map((channel) => `  ${site}/channels/${channel.channelId}   ${channel.title}: its videos and deletion timeline`),
      `  ${site}/search?q=${encodeURIComponent('Harbour OR Cocina OR Nordlicht')}&status=deleted   the deleted and re-uploaded videos`,
      ...watching,
      '',
    ].join('\n'),
  );
  if (watchlist) await startDemoReceiver(serving, watchlist, say);
}
