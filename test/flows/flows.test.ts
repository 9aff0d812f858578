/**
 * The production files each flow runs code in (test/flows/filesCrossed.ts), printed, and held to
 * the limits below: a change that makes a flow cross more files fails here and says which. Each flow
 * runs three times, on its own data each time, and a file counts when every run called it, so what a
 * timer happened to run beside the flow (a heartbeat) is left out.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { connectMcp } from '../mcp/support.ts';
import { createKeyedUser } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource } from '../support/fake-source.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import type { ChannelQuery } from '../../core/youtube/channelQuery.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';
import { filesCrossed } from './filesCrossed.ts';

// Each flow's files as the code is laid out now: one file per step along the flow (CONTRIBUTING's Layout). A new file on
// a flow raises its limit here only with a reason.
const MOST = { search: 30, summary: 28, stenogram: 32 };
const RUNS = [0, 1, 2] as const;
type Run = (typeof RUNS)[number];

let db: TestDatabase;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let key: string;
const channels = RUNS.map((run) => channelIdFor(`flows-${run}`));
const videos = RUNS.map((run) => ({ summary: videoIdFor(`flows-summary-${run}`), stenogram: videoIdFor(`flows-steno-${run}`) }));

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000, apiStenogramsPerDay: 100 } });
  // One source that knows every run's channel (each run searches one not stored yet).
  const known = channels.map((channelId) => fakeSource({ name: 'archive', channel: { channelId, title: 'Flows' }, videos: [] }));
  const resolveChannel = async (query: ChannelQuery) => (await Promise.all(known.map((s) => s.resolveChannel(query)))).find(Boolean);
  stack = await startSearchStack(db, {}, { sources: [{ ...known[0]!, resolveChannel }] });
  ({ key } = await createKeyedUser(db.sql));
  const ids = videos.flatMap((v) => [v.summary, v.stenogram]);
  await addVideos(
    db.sql,
    channels[0]!,
    ids.map((videoId) => ({ videoId, title: 'A talk' })),
  );
  for (const videoId of ids) {
    await addTrack(db.sql, { videoId, language: 'en', kind: 'manual', text: vttOf(['One line of the talk.', 'Another line of it.'], 4) });
    await db.sql.begin((tx) => refreshTranscript(tx, videoId));
  }
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await db?.drop();
});

const post = (path: string, body: object) =>
  stack.api.call(path, { key, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** Files every run of `flow` crossed. */
async function crossedEveryRun(flow: (run: Run) => Promise<void>): Promise<string[]> {
  let files: string[] | undefined;
  for (const run of RUNS) {
    const crossed = new Set(await filesCrossed(() => flow(run)));
    files = (files ?? [...crossed]).filter((file) => crossed.has(file));
  }
  return files!;
}

const flows = {
  /** POST /api/search → crawl job → events → NOTIFY → SSE to search:complete. */
  search: (run: Run) => async () => {
    const { body } = await post('/api/search', { query: channels[run] });
    await readStream(`${stack.api.url}/api/search/${body.data.searchSessionId}/stream`, {
      key,
      until: (event) => event.event === 'search:complete',
    });
  },
  /** POST /api/summary/generate → job → SSE to summary:complete → GET the summary. */
  summary: (run: Run) => async () => {
    const videoId = videos[run]!.summary;
    await post('/api/summary/generate', { videoId });
    await readStream(`${stack.api.url}/api/summary/${videoId}/stream`, { key, until: (event) => event.event === 'summary:complete' });
    await stack.api.call(`/api/summary/${videoId}`, { key });
  },
  /** An MCP client's generate_stenogram → quota → job → the stored stenogram. */
  stenogram: (run: Run) => async () => {
    const videoId = videos[run]!.stenogram;
    const mcp = await connectMcp(stack.api.url, key);
    await mcp.callTool({ name: 'generate_stenogram', arguments: { videoId } });
    await mcp.close();
    for (let stored = false; !stored; await new Promise((resolve) => setTimeout(resolve, 50)))
      stored = (await db.sql`select 1 from stenograms where video_id = ${videoId} and status = 'generated'`).length > 0;
  },
};

// The generators' own modules (how a summary or a stenogram is written) are not the flow's path.
const generatorInternals =
  /^core\/(?:summaries\/offline|text)\/|^core\/subtitles\/stageDirections\.ts$|^core\/stenograms\/(?:captionText|readTranscript|rollUp|speakerLabels|words|wordGuard|writeParagraphs|stenogramLanguage|stenogramMarkdown|progressSteps|createOfflineStenogramGenerator)\.ts$/;

// Opening a pooled connection (core/db/database.ts's socket, and the circuit it reports to) happens when a pool
// grows or an idle connection was closed: a matter of timing, not of the flow's path (a clean-clone run
// counted both in every stenogram run, a warm one in none).
const connectionOpening = /^core\/db\/(?:database|circuit)\.ts$/;

for (const [name, flow] of Object.entries(flows) as Array<[keyof typeof flows, (typeof flows)[keyof typeof flows]]>) {
  it(`${name}: crosses at most ${MOST[name]} production files`, async () => {
    const files = (await crossedEveryRun((run) => flow(run)())).filter(
      (file) => !generatorInternals.test(file) && !connectionOpening.test(file),
    );
    console.log(`${name}: ${files.length} files\n  ${files.join('\n  ')}`);
    expect(files.length, files.join(', ')).toBeLessThanOrEqual(MOST[name]);
  });
}
