import type { Sql } from '../../../core/db/database.ts';
import { readTranscriptCues } from '../../../core/llm/generation.ts';
import { distribution, median, round } from '../lib/stats.ts';
import { deliveryLatency, phases, progressSequence, spread, storedFiles, timeline, type EventRow } from './events.ts';
import type { Notification } from './events.ts';
import type { activitySampler, clusterWriters } from './services.ts';
import type { heldBackStream, Prepared } from './streams.ts';
import type { cpuDelta } from '../lib/usage.ts';
import { STREAMS, USERS } from './shape.ts';
import type { StreamRecord } from './streams.ts';

/** What one round measured, before it becomes the result. */
export interface Measured {
  label: string;
  minutes: number;
  prepared: Prepared;
  alone: StreamRecord;
  records: StreamRecord[];
  seconds: number;
  notifications: Notification[];
  wall: (at: number) => number;
  memory: {
    peakReset: boolean;
    idle: { api: number; worker: number };
    peak: { api: number; worker: number };
    end: { api: number; worker: number };
    sampled: { api: number; worker: number };
  };
  cpu: { apiUs: number | null; workerUs: number | null; delta: ReturnType<typeof cpuDelta>; databaseUs: number | null };
  /** Index scans of events_stream_seq by the API: the first stream, the one alone and the burst. */
  eventReads: number;
  cluster: Awaited<ReturnType<ReturnType<typeof clusterWriters>['stop']>>;
  held: (Awaited<ReturnType<typeof heldBackStream>> & { eventReads: number }) | null;
  warnings: { api: string[]; worker: string[] };
  activity: Awaited<ReturnType<ReturnType<typeof activitySampler>['stop']>> | null;
}

/** Reads what the round left in the database and the store, checks it, and makes the round's result. */
export async function analyse(sql: Sql, storeRoot: string, m: Measured, problems: string[]) {
  const rows = await sql<EventRow[]>`
    select e.stream, g.video_id as "videoId", e.id::text as id, e.type, (extract(epoch from e.created_at) * 1000)::float8 as "createdMs",
      octet_length(e.payload::text) as bytes, e.payload->>'stage' as stage, (e.payload->>'percent')::int as percent
    from events e join stenograms g on e.stream = 'stenogram:' || g.id::text
    order by e.stream, e.seq`;
  const statuses = await sql<
    { status: string; n: number }[]
  >`select status, count(*)::int as n from stenograms group by status order by status`;
  const [jobs] = await sql<{ left: number }[]>`
    select count(*)::int as left from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'generate_stenogram'`;
  const files = await storedFiles(storeRoot);
  // What a job reads before it generates (readTranscriptCues), timed here with the processes stopped: one at a time, idle.
  const readMs: number[] = [];
  for (const video of m.prepared.videos.slice(0, 7)) {
    const started = performance.now();
    await readTranscriptCues(sql, video.videoId);
    readMs.push(performance.now() - started);
  }
  const total = m.records.length + (m.held ? 3 : 2);
  const burstVideos = new Set(m.records.map((record) => record.videoId));
  const burstRows = rows.filter((row) => burstVideos.has(row.videoId));
  const completed = m.records.filter((record) => record.final === 'stenogram:complete');
  const expectedWords = new Map(m.prepared.videos.map((video) => [video.videoId, video.words]));
  const wrongWords = [...completed, m.alone].filter(
    (record) => record.final === 'stenogram:complete' && record.words !== expectedWords.get(record.videoId),
  );
  const generated = statuses.find((row) => row.status === 'generated')?.n ?? 0;
  if (completed.length !== STREAMS)
    problems.push(
      `${m.label}: ${completed.length} of ${STREAMS} streams got stenogram:complete (${m.records
        .filter((record) => record.error)
        .slice(0, 3)
        .map((record) => record.error)
        .join('; ')})`,
    );
  if (m.alone.final !== 'stenogram:complete')
    problems.push(`${m.label}: the stream alone before the burst ended with ${m.alone.final ?? m.alone.error}`);
  if (wrongWords.length)
    problems.push(
      `${m.label}: ${wrongWords.length} stenograms do not have their transcript's word count (e.g. ${wrongWords[0]!.words} for ${expectedWords.get(wrongWords[0]!.videoId)})`,
    );
  if (generated !== total || files.files !== total)
    problems.push(`${m.label}: ${generated} rows generated and ${files.files} files in the store for ${total} generations`);
  const delivery = deliveryLatency(m.records, burstRows, m.notifications, m.wall);
  const aloneDelivery = deliveryLatency(
    [m.alone],
    rows.filter((row) => row.videoId === m.alone.videoId),
    m.notifications,
    m.wall,
  );
  const heldVideo = m.held?.record.videoId;
  const heldStream = rows.find((row) => row.videoId === heldVideo)?.stream;
  const heldDelivery = m.held
    ? deliveryLatency(
        [m.held.record],
        rows.filter((row) => row.videoId === heldVideo),
        m.notifications,
        m.wall,
      )
    : null;
  if (m.held && m.held.record.final !== 'stenogram:complete')
    problems.push(`${m.label}: the stream beside a held transaction ended with ${m.held.record.final ?? m.held.record.error}`);
  const notificationsBeforeHold = m.notifications.filter((note) => note.stream !== heldStream).length;
  if (delivery.mismatchedStreams)
    problems.push(
      `${m.label}: ${delivery.mismatchedStreams} streams had a different number of NOTIFYs than events, so their commit times are unknown`,
    );
  const { delta } = m.cpu;
  const cores = (us: number | null) => (us === null ? null : round(us / 1e6 / m.seconds, 2));
  const ours = (m.cpu.apiUs ?? 0) + (m.cpu.workerUs ?? 0) + (delta.postgresUs ?? 0) + delta.selfUs;
  const toComplete = (record: StreamRecord) =>
    record.final === 'stenogram:complete' ? record.events[record.events.length - 1]!.at - record.postedAt : Number.NaN;
  const toStarted = (record: StreamRecord) =>
    (record.events.find((event) => event.type === 'stenogram:started')?.at ?? Number.NaN) - record.postedAt;
  return {
    label: m.label,
    minutes: m.minutes,
    streams: STREAMS,
    users: USERS,
    transcript: {
      cuesPerVideo: round(m.prepared.cues / m.prepared.videos.length, 0),
      wordsPerVideo: round(m.prepared.videos.reduce((sum, video) => sum + video.words, 0) / m.prepared.videos.length, 0),
    },
    completed: completed.length,
    failed: m.records.filter((record) => record.final === 'stenogram:error').length,
    errors: m.records.flatMap((record) => (record.error ? [record.error] : [])).slice(0, 5),
    totalSeconds: round(m.seconds, 2)!,
    perStreamMs: {
      headers: distribution(
        m.records.map((record) => record.headersAt - record.postedAt),
        0,
      ),
      started: distribution(m.records.map(toStarted), 0),
      complete: distribution(m.records.map(toComplete), 0),
    },
    phases: phases(burstRows),
    delivery,
    /** The stream generated alone just before the burst (the same API and worker, idle, the route warmed by one request). */
    alone: {
      headersMs: round(m.alone.headersAt - m.alone.postedAt, 1),
      startedMs: round(toStarted(m.alone), 1),
      completeMs: round(toComplete(m.alone), 1),
      phases: phases(rows.filter((row) => row.videoId === m.alone.videoId)),
      /** Its events as committed: type (stage percent) and ms after stenogram:started's created_at. */
      timeline: timeline(rows.filter((row) => row.videoId === m.alone.videoId)),
      spread: spread(rows.filter((row) => row.videoId === m.alone.videoId)),
      fromCommitMs: aloneDelivery.fromCommitMs,
    },
    /** readTranscriptCues of one video on the idle database, median of the last 5 of 7 (the first two warm the statement). */
    transcriptReadMs: round(median(readMs.slice(2)), 1),
    eventsPerStream: round(burstRows.length / STREAMS, 1),
    progress: progressSequence(rows),
    completeEventKiB: round(median(burstRows.filter((row) => row.type === 'stenogram:complete').map((row) => row.bytes)) / 1024, 1),
    /** Reads of the events table by the API during the whole round (the lone stream too), against the notifications it had. */
    eventReads: {
      reads: m.eventReads,
      notifications: notificationsBeforeHold,
      perNotification: round(m.eventReads / notificationsBeforeHold, 1),
    },
    /** Write transactions open in other databases of the cluster during the burst (sampled every 50 ms). */
    clusterWriters: m.cluster,
    /** What-if: one stream while a transaction with an xid was held open for HOLD_MS. */
    held:
      m.held && heldDelivery
        ? {
            heldMs: round(m.held.heldMs, 0),
            completeMs: round(
              m.held.record.events.length ? m.held.record.events[m.held.record.events.length - 1]!.at - m.held.record.postedAt : Number.NaN,
              0,
            ),
            /** Events that reached the client only after the held transaction ended. */
            arrivedAfterRelease: m.held.record.events.filter((event) => event.at >= m.held!.releasedAt).length,
            events: m.held.record.events.length,
            fromCommitMs: heldDelivery.fromCommitMs.all,
            eventReads: m.held.eventReads,
            notifications: m.notifications.length - notificationsBeforeHold,
          }
        : null,
    rows: statuses,
    store: { files: files.files, bytes: files.bytes },
    jobsLeft: jobs?.left ?? null,
    memoryMiB: {
      peakReset: m.memory.peakReset,
      api: {
        idle: round(m.memory.idle.api, 1),
        maxSampled: round(m.memory.sampled.api, 1),
        peak: round(m.memory.peak.api, 1),
        end: round(m.memory.end.api, 1),
      },
      worker: {
        idle: round(m.memory.idle.worker, 1),
        maxSampled: round(m.memory.sampled.worker, 1),
        peak: round(m.memory.peak.worker, 1),
        end: round(m.memory.end.worker, 1),
      },
    },
    cpuCores: {
      seconds: round(m.seconds, 2),
      api: cores(m.cpu.apiUs),
      worker: cores(m.cpu.workerUs),
      postgres: cores(delta.postgresUs),
      /** Of those, the backends serving this round's database. */
      postgresThisDatabase: cores(m.cpu.databaseUs),
      harness: cores(delta.selfUs),
      machine: cores(delta.machineBusyUs),
      /** Cores busy with other processes of the machine (not API, worker, PostgreSQL or this one): a disturbance gauge. */
      other: delta.machineBusyUs === null ? null : cores(Math.max(0, delta.machineBusyUs - ours)),
    },
    warnings: m.warnings,
    pgActivity: m.activity,
  };
}
