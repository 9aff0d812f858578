import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Task } from 'graphile-worker';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { AppError } from '../../core/errors.ts';
import type { FtsRequest, FtsSort } from '../../core/fts/backend.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { createTypesenseBackend } from '../../core/fts/typesense/backend.ts';
import { typesenseTarget } from '../../core/fts/typesense/client.ts';
import { collectionSchema } from '../../core/fts/typesense/documents.ts';
import { setSearchSync } from '../../core/fts/typesense/sync.ts';
import { createLogger } from '../../core/log.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { indexVideosTask } from '../../pipeline/tasks/index_videos.ts';
import { startWorker } from '../../pipeline/worker.ts';
import { eventually, freePort, parseJson, runCli, runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { channelIdFor, videoIdFor } from '../support/subtitles.ts';

// The exact requests the Typesense backend, the index_videos task and `afterimage reindex` send, answered by a
// stand-in that speaks Typesense's wire format; and the triggers that queue changed videos.

const KEY = 'typesense-test-key';
const CHANNEL = channelIdFor('typesense');
const silent = createLogger('silent');
const quick = { retries: 1, minDelayMs: 5 };

interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
}
interface Hit {
  document: { id: string };
  highlights?: unknown[];
  highlight?: unknown;
  text_match?: number;
}

/** A Typesense stand-in: collections, aliases, JSONL imports (refusing chosen ids), deletes by id filter, queued search answers. */
async function startTypesense() {
  const requests: Recorded[] = [];
  const collections = new Map<string, { schema: Record<string, unknown>; documents: Map<string, Record<string, unknown>> }>();
  const aliases = new Map<string, string>();
  const refuse = new Set<string>();
  const searchAnswers: Array<{ found: number; hits: Hit[] }> = [];
  const failNext: number[] = [];
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://typesense');
      const record = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      };
      requests.push(record);
      if (req.headers['x-typesense-api-key'] !== KEY)
        return json(res, 401, { message: 'Forbidden - a valid `x-typesense-api-key` header must be sent.' });
      const failure = failNext.shift();
      if (failure) return json(res, failure, { message: 'Not Ready or Lagging' });
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      const resolve = (name: string) => aliases.get(name) ?? name;
      if (parts[0] === 'aliases' && parts[1]) {
        if (req.method === 'PUT') {
          aliases.set(parts[1], JSON.parse(body).collection_name);
          return json(res, 200, { name: parts[1], collection_name: aliases.get(parts[1]) });
        }
        const target = aliases.get(parts[1]);
        return target ? json(res, 200, { name: parts[1], collection_name: target }) : json(res, 404, { message: 'Not Found' });
      }
      if (parts[0] === 'collections' && parts.length === 1 && req.method === 'POST') {
        const schema = JSON.parse(body);
        if (collections.has(schema.name)) return json(res, 409, { message: `A collection with name \`${schema.name}\` already exists.` });
        collections.set(schema.name, { schema, documents: new Map() });
        return json(res, 201, { ...schema, num_documents: 0, created_at: 1 });
      }
      const name = parts[1] ? resolve(parts[1]) : '';
      const collection = collections.get(name);
      if (parts[0] !== 'collections' || !collection) return json(res, 404, { message: `No collection with name \`${parts[1]}\` found.` });
      if (parts.length === 2 && req.method === 'DELETE') {
        collections.delete(name);
        return json(res, 200, { ...collection.schema, num_documents: collection.documents.size });
      }
      if (parts[3] === 'import') {
        const lines = body.split('\n').map((line) => {
          const document = JSON.parse(line);
          if (refuse.has(document.id)) return { code: 400, document: line, error: 'Field `view_count` must be an int64.', success: false };
          collection.documents.set(document.id, document);
          return { success: true };
        });
        return res
          .writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' })
          .end(lines.map((line) => JSON.stringify(line)).join('\n'));
      }
      if (parts[3] === 'search') {
        // As Typesense does, a filter on a field the schema lacks is 404.
        const fields = new Set((collection.schema.fields as Array<{ name: string }>).map((field) => field.name));
        const filtered = [...(url.searchParams.get('filter_by') ?? '').replace(/`[^`]*`/g, '').matchAll(/(\w+):/g)].map(
          (match) => match[1]!,
        );
        const missing = filtered.find((field) => !fields.has(field));
        if (missing) return json(res, 404, { message: `Could not find a filter field named \`${missing}\` in the schema.` });
        const answer = searchAnswers.shift() ?? { found: 0, hits: [] };
        return json(res, 200, {
          facet_counts: [],
          found: answer.found,
          hits: answer.hits,
          out_of: collection.documents.size,
          page: Number(url.searchParams.get('page')),
          request_params: { collection_name: name, per_page: Number(url.searchParams.get('per_page')), q: url.searchParams.get('q') },
          search_cutoff: false,
          search_time_ms: 0,
        });
      }
      if (parts.length === 3 && req.method === 'DELETE') {
        const ids = [...(url.searchParams.get('filter_by') ?? '').matchAll(/`([^`]*)`/g)].map((match) => match[1]!);
        const deleted = ids.filter((id) => collection.documents.delete(id));
        return json(res, 200, { num_deleted: deleted.length });
      }
      return json(res, 404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    collections,
    aliases,
    refuse,
    searchAnswers,
    failNext,
    /** Requests since the last reset, without the ones a test does not look at. */
    reset() {
      requests.length = 0;
      collections.clear();
      aliases.clear();
      refuse.clear();
      searchAnswers.length = 0;
      failNext.length = 0;
    },
    createCollection(name: string, alias?: string, schema: object = collectionSchema(name)) {
      collections.set(name, { schema: schema as Record<string, unknown>, documents: new Map() });
      if (alias) aliases.set(alias, name);
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

let db: TestDatabase;
let typesense: Awaited<ReturnType<typeof startTypesense>>;
const configFor = (env: Record<string, string> = {}) =>
  loadConfig({ TYPESENSE_URL: typesense.url, TYPESENSE_API_KEY: KEY, TYPESENSE_COLLECTION: 'videos', ...env });
const hit = (id: string, matched: string[] = []): Hit => ({
  document: { id },
  highlights: matched.length
    ? [{ field: 'title', matched_tokens: matched, snippet: matched.map((token) => `<mark>${token}</mark>`).join(' ') }]
    : [],
  highlight: matched.length
    ? { title: { matched_tokens: matched, snippet: matched.map((token) => `<mark>${token}</mark>`).join(' ') } }
    : {},
  // Typesense's own value, beyond 2^53: JSON.parse reads it as the nearest double, as the client does.
  // biome-ignore lint/correctness/noPrecisionLoss: the recorded answer's number, kept as Typesense sent it
  text_match: 578730123365187705,
});

beforeAll(async () => {
  db = await createTestDatabase();
  typesense = await startTypesense();
  await db.sql`insert into channels (channel_id, title) values (${CHANNEL}, 'Typesense channel')`;
});
afterAll(async () => {
  await typesense?.close();
  await db?.drop();
});
beforeEach(async () => {
  typesense.reset();
  await setSearchSync(db.sql, false);
  await db.sql`delete from search_sync_queue`;
  await db.sql`delete from graphile_worker._private_jobs`;
});

const request = (overrides: Partial<FtsRequest> & { q: string }): FtsRequest => ({
  query: parseQuery(overrides.q),
  filters: {},
  sort: 'relevance',
  offset: 0,
  limit: 20,
  ...overrides,
});
const searches = () => typesense.requests.filter((r) => r.path.endsWith('/documents/search'));

describe('searching', () => {
  it('sends all-words-must-match q, OR groups and exclusions as filters, filters, sort, page and the API key', async () => {
    typesense.createCollection('videos_1', 'videos');
    typesense.searchAnswers.push({ found: 42, hits: [hit('aaaaaaaaaaa'), hit('bbbbbbbbbbb')] });
    const backend = createTypesenseBackend({ config: configFor(), sql: db.sql, log: silent, ...quick });
    const page = await backend.search(
      request({
        q: 'Lathe "Old Bridge" "the old mill" cats OR dogs OR "hot dog" OR "big red dog" -snake -"bad day" -"not a snake"',
        filters: { status: 'deleted', hasVideo: true, hasSubtitles: false, hasSummary: true },
        sort: 'date-desc',
        offset: 20,
        limit: 10,
      }),
    );
    expect(page).toEqual({ videoIds: ['aaaaaaaaaaa', 'bbbbbbbbbbb'], total: 42, totalExact: true });
    expect(searches()).toHaveLength(1);
    const [sent] = searches();
    expect(sent!.method).toBe('GET');
    expect(sent!.path).toBe('/collections/videos/documents/search');
    expect(sent!.headers['x-typesense-api-key']).toBe(KEY);
    expect(sent!.query).toEqual({
      q: 'lathe old bridge "the old mill" -"not a snake"',
      query_by: 'title,tags,description',
      query_by_weights: '3,2,1',
      num_typos: '0',
      typo_tokens_threshold: '0',
      drop_tokens_threshold: '0',
      prefix: 'false',
      split_join_tokens: 'off',
      filter_by:
        '(tokens:[`cats`,`dogs`] || (pairs:=`hot_dog`) || (pairs:=`big_red` && pairs:=`red_dog`)) && pairs:=`old_bridge` && tokens:!=[`snake`] && pairs:!=[`bad_day`] && status:=deleted && has_video:=true && has_subtitles:=false && has_summary:=true',
      sort_by: 'date_desc:desc,view_count:desc,video_id:asc',
      page: '3',
      per_page: '10',
      include_fields: 'id',
    });
  });

  it('sorts on the field of each direction, ties by views then video id; a query of only OR groups is q=*', async () => {
    typesense.createCollection('videos_1', 'videos');
    const backend = createTypesenseBackend({ config: configFor(), sql: db.sql, log: silent, ...quick });
    const expected: Record<FtsSort, string> = {
      relevance: '_text_match:desc,view_count:desc,video_id:asc',
      'date-desc': 'date_desc:desc,view_count:desc,video_id:asc',
      'date-asc': 'date_asc:asc,view_count:desc,video_id:asc',
      'duration-desc': 'duration_desc:desc,view_count:desc,video_id:asc',
      'duration-asc': 'duration_asc:asc,view_count:desc,video_id:asc',
    };
    for (const sort of Object.keys(expected) as FtsSort[]) await backend.search(request({ q: 'lathe', sort }));
    expect(searches().map((r) => r.query.sort_by)).toEqual(Object.values(expected));

    await backend.search(request({ q: 'cats OR dogs -"bad day" -snake -"not a snake"' }));
    expect(searches().at(-1)!.query).toMatchObject({
      q: '*',
      filter_by: '(tokens:[`cats`,`dogs`]) && tokens:!=[`snake`] && pairs:!=[`bad_day`] && (pairs:!=`not_a` || pairs:!=`a_snake`)',
      sort_by: 'view_count:desc,video_id:asc',
    });
    // CJK words are phrases of characters, as the documents hold them.
    await backend.search(request({ q: 'Café 東京' }));
    expect(searches().at(-1)!.query).toMatchObject({ q: 'cafe 東 京', filter_by: 'pairs:=`東_京`' });
    await expect(backend.search(request({ q: 'lathe', offset: 5, limit: 10 }))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('suggests from the words a typo-tolerant search matched, and only when the corrected query finds something', async () => {
    typesense.createCollection('videos_1', 'videos');
    const backend = createTypesenseBackend({ config: configFor(), sql: db.sql, log: silent, ...quick });
    typesense.searchAnswers.push(
      { found: 1, hits: [hit('ccccccccccc', ['python', 'tutorial'])] },
      { found: 3, hits: [hit('ccccccccccc')] },
    );
    expect(await backend.suggest(parseQuery('pythn tutorial -snake'), { status: 'live' })).toBe('python tutorial -snake');
    const [typo, check] = searches();
    expect(typo!.query).toMatchObject({
      q: 'pythn tutorial',
      num_typos: '2',
      typo_tokens_threshold: '1',
      drop_tokens_threshold: '0',
      prefix: 'false',
      per_page: '1',
      page: '1',
      filter_by: 'status:=live',
    });
    expect(check!.query).toMatchObject({
      q: 'python tutorial',
      num_typos: '0',
      filter_by: 'tokens:!=[`snake`] && status:=live',
      per_page: '1',
    });

    typesense.requests.length = 0;
    typesense.searchAnswers.push({ found: 1, hits: [hit('ccccccccccc', ['python'])] }, { found: 0, hits: [] });
    expect(await backend.suggest(parseQuery('pythn'), {})).toBeNull();
    expect(searches()).toHaveLength(2);

    typesense.requests.length = 0;
    typesense.searchAnswers.push({ found: 0, hits: [] });
    expect(await backend.suggest(parseQuery('qqqqzzzz'), {})).toBeNull();
    typesense.searchAnswers.push({ found: 1, hits: [hit('ccccccccccc', ['lathe'])] });
    expect(await backend.suggest(parseQuery('lathe'), {})).toBeNull();
    expect(searches()).toHaveLength(2); // no confirming search when nothing was corrected
  });

  it('answers SERVICE_UNAVAILABLE saying what to check: down, wrong key, failing, no collection; retries transient failures', async () => {
    const down = createTypesenseBackend({
      config: loadConfig({ TYPESENSE_URL: `http://127.0.0.1:${await freePort()}`, TYPESENSE_API_KEY: KEY }),
      sql: db.sql,
      log: silent,
      ...quick,
    });
    const refused = await down.search(request({ q: 'lathe' })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect((refused as Error).message).toMatch(
      /^Typesense at http:\/\/127\.0\.0\.1:\d+ did not answer \(ECONNREFUSED\) to search: check that the Typesense server runs and that TYPESENSE_URL points at it$/,
    );

    typesense.createCollection('videos_1', 'videos');
    const wrongKey = createTypesenseBackend({ config: configFor({ TYPESENSE_API_KEY: 'wrong' }), sql: db.sql, log: silent, ...quick });
    await expect(wrongKey.search(request({ q: 'lathe' }))).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringMatching(/refused the API key \(HTTP 401\).*check TYPESENSE_API_KEY/),
    });
    expect(searches()).toHaveLength(1); // a refusal is not retried

    const backend = createTypesenseBackend({ config: configFor(), sql: db.sql, log: silent, ...quick });
    typesense.requests.length = 0;
    typesense.failNext.push(503);
    typesense.searchAnswers.push({ found: 1, hits: [hit('ddddddddddd')] });
    expect((await backend.search(request({ q: 'lathe' }))).videoIds).toEqual(['ddddddddddd']);
    expect(searches()).toHaveLength(2);

    typesense.failNext.push(503, 503);
    await expect(backend.search(request({ q: 'lathe' }))).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringMatching(/failed \(HTTP 503: Not Ready or Lagging\) to search, also after 1 retries/),
    });

    const missing = createTypesenseBackend({ config: configFor({ TYPESENSE_COLLECTION: 'nothing' }), sql: db.sql, log: silent, ...quick });
    await expect(missing.search(request({ q: 'lathe' }))).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringMatching(/no usable collection "nothing".*run `npx afterimage reindex`/),
    });
  });

  it('says to reindex when the collection behind the alias predates a field a query filters on', async () => {
    const current = collectionSchema('videos_1');
    typesense.createCollection('videos_1', 'videos', { ...current, fields: current.fields!.filter((field) => field.name !== 'pairs') });
    const backend = createTypesenseBackend({ config: configFor(), sql: db.sql, log: silent, ...quick });
    await backend.search(request({ q: 'cats OR dogs' }));
    await expect(backend.search(request({ q: 'cats OR "hot dog"' }))).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: `Typesense at ${typesense.url}: the collection behind "videos" has no field "pairs", which this version searches (it was built by an older one), to search: run \`npx afterimage reindex\` to rebuild it`,
    });
    expect(searches()).toHaveLength(2); // a 404 is not retried
  });
});

const queued = async () =>
  (await db.sql<{ videoId: string }[]>`select video_id as "videoId" from search_sync_queue`).map((row) => row.videoId).sort();
const indexJobs = () => db.sql<{ key: string; later: boolean; attempts: number }[]>`
  select key, run_at > now() as later, attempts from graphile_worker.jobs where task_identifier = 'index_videos'`;
/** Videos are hardly ever deleted: their status history is append-only, so a test sets that aside first. */
const deleteVideo = (videoId: string) =>
  db.sql.begin(async (tx) => {
    await tx`alter table video_status_history disable trigger video_status_history_append_only`;
    await tx`delete from video_status_history where video_id = ${videoId}`;
    await tx`alter table video_status_history enable trigger video_status_history_append_only`;
    await tx`delete from videos where video_id = ${videoId}`;
  });
const addVideo = (videoId: string, fields: Record<string, unknown> = {}) =>
  db.sql`insert into videos ${db.sql({ video_id: videoId, channel_id: CHANNEL, title: `Video ${videoId}`, ...fields })}`;

describe('the queue triggers', () => {
  it('queue nothing while sync is off', async () => {
    await addVideo(videoIdFor('off-1'));
    await db.sql`update videos set view_count = 9 where video_id = ${videoIdFor('off-1')}`;
    await deleteVideo(videoIdFor('off-1'));
    expect(await queued()).toEqual([]);
    expect(await indexJobs()).toEqual([]);
  });

  it('queue inserted, changed and deleted videos and one batched job, but not updates that change nothing searched', async () => {
    expect(await setSearchSync(db.sql, true)).toBe(true);
    expect(await setSearchSync(db.sql, true)).toBe(false);
    const [a, b, c] = [videoIdFor('trigger-a'), videoIdFor('trigger-b'), videoIdFor('trigger-c')];
    await db.sql`insert into videos ${db.sql([a, b].map((id) => ({ video_id: id, channel_id: CHANNEL, title: 'Two at once' })))}`;
    expect(await queued()).toEqual([a, b].sort());
    expect(await indexJobs()).toEqual([{ key: 'index_videos', later: true, attempts: 0 }]);

    await db.sql`delete from search_sync_queue`;
    await db.sql`update videos set title = title where video_id = ${a}`;
    await db.sql`update videos set thumbnail_url = 'https://i.ytimg.com/x.jpg', archive_url = 'https://web.archive.org/web/2020/x' where video_id = ${a}`;
    expect(await queued()).toEqual([]);
    for (const change of [
      db.sql`view_count = 5`,
      db.sql`tags = '{new}'`,
      db.sql`video_file_url = 'https://archive.org/a.mp4'`,
      db.sql`upload_date = '2020-01-01'`,
    ]) {
      await db.sql`update videos set ${change} where video_id = ${a}`;
      expect(await queued()).toEqual([a]);
      await db.sql`delete from search_sync_queue`;
    }

    await deleteVideo(b);
    expect(await queued()).toEqual([b]);
    await db.sql`delete from search_sync_queue`;

    // An upsert: one row inserted, one updated.
    await db.sql`
      insert into videos (video_id, channel_id, title) values (${a}, ${CHANNEL}, 'Renamed'), (${c}, ${CHANNEL}, 'New')
      on conflict (video_id) do update set title = excluded.title`;
    expect(await queued()).toEqual([a, c].sort());
    expect(await indexJobs()).toHaveLength(1);

    expect(await setSearchSync(db.sql, false)).toBe(true);
    await db.sql`delete from search_sync_queue`;
    await db.sql`update videos set title = 'Off again' where video_id = ${a}`;
    expect(await queued()).toEqual([]);
  });
});

const runTask = (task: Task) => task({}, {} as Parameters<Task>[1]);

describe('the index_videos task', () => {
  const [full, bare, gone] = [videoIdFor('index-full'), videoIdFor('index-bare'), videoIdFor('index-gone')];

  it('upserts queued videos as JSONL, deletes the gone ones, re-queues refused documents and fails for the retry', async () => {
    await setSearchSync(db.sql, true);
    await addVideo(full, {
      title: 'Café Über',
      tags: ['Tag One'],
      description: 'Some 東京 text, some more',
      status: 'deleted',
      status_reason: 'unknown',
      video_file_url: 'https://archive.org/f.mp4',
      has_subtitles: true,
      language: 'en',
      upload_date: '2020-01-02',
      duration_seconds: 61,
      view_count: 7,
    });
    await addVideo(bare, { title: null });
    await addVideo(gone);
    await deleteVideo(gone);
    expect(await queued()).toEqual([full, bare, gone].sort());

    typesense.createCollection('videos_1', 'videos');
    typesense.refuse.add(bare);
    const lines: string[] = [];
    const log = createLogger('warn', {}, (line) => lines.push(line));
    const target = typesenseTarget(configFor(), log, { purpose: 'indexing', retries: 0, minDelayMs: 1 });
    const task = indexVideosTask({ sql: db.sql, log, typesense: target! });
    await expect(runTask(task)).rejects.toThrow(
      `Typesense refused 1 video documents (first: ${bare}: Field \`view_count\` must be an int64.); they are queued again for the retry`,
    );

    const [imported, deleted, ...more] = typesense.requests;
    expect(more).toEqual([]);
    expect(imported).toMatchObject({ method: 'POST', path: '/collections/videos/documents/import', query: { action: 'upsert' } });
    expect(imported!.headers['content-type']).toMatch(/^text\/plain/);
    expect(imported!.headers['x-typesense-api-key']).toBe(KEY);
    const documents = imported!.body.split('\n').map((line) => JSON.parse(line));
    expect(documents.map((document) => document.id).sort()).toEqual([full, bare].sort());
    expect(documents.find((document) => document.id === full)).toEqual({
      id: full,
      video_id: full,
      title: 'cafe uber',
      tags: 'tag one',
      description: 'some 東 京 text some more',
      tokens: ['cafe', 'uber', 'tag', 'one', 'some', '東', '京', 'text', 'more'],
      // Adjacent pairs run on across title, tags and description.
      pairs: ['cafe_uber', 'uber_tag', 'tag_one', 'one_some', 'some_東', '東_京', '京_text', 'text_some', 'some_more'],
      status: 'deleted',
      has_video: true,
      has_subtitles: true,
      has_summary: false,
      channel_id: CHANNEL,
      language: 'en',
      date_desc: 18263,
      date_asc: 18263,
      duration_desc: 61,
      duration_asc: 61,
      view_count: 7,
    });
    // Missing values sort last both ways: the lowest value where the order is descending, the highest where ascending.
    expect(documents.find((document) => document.id === bare)).toEqual({
      id: bare,
      video_id: bare,
      title: '',
      tags: '',
      description: '',
      tokens: [],
      pairs: [],
      status: 'checking',
      has_video: false,
      has_subtitles: false,
      has_summary: false,
      channel_id: CHANNEL,
      date_desc: -Number.MAX_SAFE_INTEGER,
      date_asc: Number.MAX_SAFE_INTEGER,
      duration_desc: -Number.MAX_SAFE_INTEGER,
      duration_asc: Number.MAX_SAFE_INTEGER,
      view_count: -1,
    });
    expect(deleted).toMatchObject({ method: 'DELETE', path: '/collections/videos/documents', query: { filter_by: `id:[\`${gone}\`]` } });

    expect(await queued()).toEqual([bare]);
    const warning = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'Typesense refused a video document');
    expect(warning).toMatchObject({ level: 'warn', task: 'index_videos', videoId: bare, reason: 'Field `view_count` must be an int64.' });

    // The retry takes the re-queued one.
    typesense.refuse.clear();
    typesense.requests.length = 0;
    await runTask(task);
    expect(typesense.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /collections/videos/documents/import']);
    expect(typesense.requests[0]!.body.split('\n').map((line) => JSON.parse(line).id)).toEqual([bare]);
    expect(await queued()).toEqual([]);
    expect([...typesense.collections.get('videos_1')!.documents.keys()].sort()).toEqual([full, bare].sort());
  });

  it('leaves the queue as it was when Typesense is down, and while a reindex runs', async () => {
    await setSearchSync(db.sql, true);
    await db.sql`update videos set view_count = 8 where video_id = ${full}`;
    expect(await queued()).toEqual([full]);

    const down = typesenseTarget(loadConfig({ TYPESENSE_URL: `http://127.0.0.1:${await freePort()}`, TYPESENSE_API_KEY: KEY }), silent, {
      purpose: 'indexing',
      retries: 1,
      minDelayMs: 1,
    });
    await expect(runTask(indexVideosTask({ sql: db.sql, log: silent, typesense: down! }))).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining('did not answer (ECONNREFUSED)'),
    });
    expect(await queued()).toEqual([full]);

    typesense.createCollection('videos_1', 'videos');
    const task = indexVideosTask({ sql: db.sql, log: silent, typesense: typesenseTarget(configFor(), silent, { purpose: 'indexing' })! });
    await db.sql`update search_sync set reindexing_until = now() + interval '1 minute'`;
    await runTask(task);
    expect(typesense.requests).toEqual([]);
    expect(await queued()).toEqual([full]);
    await db.sql`update search_sync set reindexing_until = now() - interval '1 second'`;
    await runTask(task);
    expect(typesense.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /collections/videos/documents/import']);
    expect(await queued()).toEqual([]);
    // The saved queries are re-run over what Typesense now holds (one job, however many batches queue it).
    expect(
      await db.sql`select 1 from graphile_worker.jobs where task_identifier = 'run_saved_queries' and key = 'run_saved_queries'`,
    ).toHaveLength(1);
  });

  it('runs in the worker, which turns sync on with TYPESENSE_URL and off without', async () => {
    typesense.createCollection('videos_1', 'videos');
    const config = loadConfig({
      DATABASE_URL: db.url,
      TYPESENSE_URL: typesense.url,
      TYPESENSE_API_KEY: KEY,
      TYPESENSE_COLLECTION: 'videos',
      ARCHIVE_DIR: '/nonexistent-afterimage-archive',
    });
    const database = { sql: db.sql, url: db.url, embedded: false, close: async () => {} };
    const worker = await startWorker(config, database, silent, await buildServices(config, { sql: db.sql, log: silent }, { sources: [] }));
    try {
      const [sync] = await db.sql`select enabled from search_sync`;
      expect(sync!.enabled).toBe(true);
      const live = videoIdFor('worker-live');
      await addVideo(live, { title: 'Indexed by the worker' });
      await eventually(() => typesense.collections.get('videos_1')!.documents.get(live), 'the worker to index the new video');
      expect(typesense.collections.get('videos_1')!.documents.get(live)).toMatchObject({ title: 'indexed by the worker' });
      await eventually(async () => (await queued()).length === 0, 'the queue to drain');
    } finally {
      await worker.stop();
    }
    const withoutConfig = loadConfig({ DATABASE_URL: db.url, ARCHIVE_DIR: '/nonexistent-afterimage-archive' });
    const without = await startWorker(
      withoutConfig,
      database,
      silent,
      await buildServices(withoutConfig, { sql: db.sql, log: silent }, { sources: [] }),
    );
    await without.stop();
    const [sync] = await db.sql`select enabled from search_sync`;
    expect(sync!.enabled).toBe(false);
  });
});

describe('afterimage reindex', () => {
  const env = () => ({ DATABASE_URL: db.url, TYPESENSE_URL: typesense.url, TYPESENSE_API_KEY: KEY, TYPESENSE_COLLECTION: 'videos' });

  beforeAll(async () => {
    await setSearchSync(db.sql, false);
    // More than one batch of 5,000.
    await db.sql`
      insert into videos (video_id, channel_id, title, view_count)
      select 'bulk' || lpad(i::text, 7, '0'), ${CHANNEL}, 'Bulk video ' || i, i from generate_series(1, 5003) i`;
  });

  it('builds a new collection in keyset batches, then points the alias at it and drops the previous one', async () => {
    typesense.createCollection('videos_20200101000000', 'videos');
    await setSearchSync(db.sql, true);
    const before = await db.sql<{ videoId: string }[]>`select video_id as "videoId" from videos order by video_id`;
    const result = await runCli(['reindex', '--json'], env());
    expect(result.code, result.stderr).toBe(0);
    const printed = parseJson(result);
    expect(printed).toEqual({
      collection: expect.stringMatching(/^videos_\d{14}$/),
      documents: before.length,
      seconds: expect.any(Number),
    });
    const collection: string = printed.collection;
    expect(result.stderr).toMatch(/indexing/);

    expect(typesense.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /aliases/videos',
      'POST /collections',
      `POST /collections/${collection}/documents/import`,
      `POST /collections/${collection}/documents/import`,
      'PUT /aliases/videos',
      'DELETE /collections/videos_20200101000000',
    ]);
    for (const sent of typesense.requests) expect(sent.headers['x-typesense-api-key']).toBe(KEY);
    const [, create, first, second, alias] = typesense.requests;
    expect(JSON.parse(create!.body)).toEqual(collectionSchema(collection));
    expect(first!.query.action).toBe('upsert');
    const ids = [first!, second!].map((sent) => sent.body.split('\n').map((line) => JSON.parse(line).id as string));
    expect(ids.map((batch) => batch.length)).toEqual([5_000, before.length - 5_000]);
    expect(ids.flat()).toEqual(before.map((row) => row.videoId));
    expect(JSON.parse(alias!.body)).toEqual({ collection_name: collection });
    expect(typesense.aliases.get('videos')).toBe(collection);
    expect([...typesense.collections.keys()]).toEqual([collection]);

    // The queue is no longer paused, and its job is woken for what changed meanwhile.
    const [sync] = await db.sql`select reindexing_until from search_sync`;
    expect(sync!.reindexing_until).toBeNull();
    expect(await indexJobs()).toHaveLength(1);
  });

  it('keeps the alias and drops the unfinished collection when Typesense refuses a document', async () => {
    typesense.createCollection('videos_20200101000000', 'videos');
    typesense.refuse.add('bulk0000001');
    const result = await runCommand(['reindex'], env());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /afterimage: Typesense refused 1 of 5000 documents \(first: bulk0000001: Field `view_count` must be an int64\.\); "videos" still points at videos_20200101000000: fix the cause and run npx afterimage reindex again/,
    );
    expect(typesense.requests.map((r) => r.method + ' ' + r.path.replace(/videos_\d{14}(?<!20200101000000)/, 'NEW'))).toEqual([
      'GET /aliases/videos',
      'POST /collections',
      'POST /collections/NEW/documents/import',
      'DELETE /collections/NEW',
    ]);
    expect(typesense.aliases.get('videos')).toBe('videos_20200101000000');
    expect([...typesense.collections.keys()]).toEqual(['videos_20200101000000']);
  });

  // In this process: the real one is the first case's.
  it('says what to set without TYPESENSE_URL (exit 2), and what to check when Typesense is not there', async () => {
    const unset = await runCommand(['reindex'], { DATABASE_URL: db.url });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toBe(
      'afterimage: TYPESENSE_URL is not set: set TYPESENSE_URL (e.g. http://localhost:8108) and TYPESENSE_API_KEY to the Typesense server to index into, then run npx afterimage reindex again\n',
    );
    const noKey = await runCommand(['reindex', '--json'], { DATABASE_URL: db.url, TYPESENSE_URL: typesense.url });
    expect(noKey.code).toBe(2);
    expect(parseJson(noKey).error).toEqual({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('TYPESENSE_API_KEY: required when TYPESENSE_URL is set'),
    });
    const wrongKey = await runCommand(['reindex', '--json'], { ...env(), TYPESENSE_API_KEY: 'wrong' });
    expect(wrongKey.code).toBe(1);
    expect(parseJson(wrongKey).error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: `Typesense at ${typesense.url} refused the API key (HTTP 401) to read the alias "videos": check TYPESENSE_API_KEY`,
    });
  });
});
