import { activeArchiveRoots } from '../archives/archiveRoots.ts';
import type { Config } from '../config.ts';
import type { Sql } from '../db/database.ts';
import type { SearchBackend } from '../fts/backend.ts';
import { configuredIndexingTarget, configuredSearchBackend } from '../fts/configured.ts';
import type { TypesenseTarget } from '../fts/typesense/client.ts';
import { configuredLlmClient } from '../llm/configuredClient.ts';
import type { LlmClient } from '../llm/types.ts';
import type { Logger } from '../log.ts';
import { configuredServerKey, type ServerKey } from '../secrets/serverKey.ts';
import { configuredSources, configuredWaybackThumbnails } from '../sources/configured.ts';
import type { VideoSource } from '../sources/types.ts';
import type { WaybackThumbnailFetcher } from '../sources/wayback/thumbnail.ts';
import { configuredStatusProbe, type StatusProbe } from '../status/probes.ts';
import { createLlmStenogramGenerator } from '../stenograms/createLlmStenogramGenerator.ts';
import { createOfflineStenogramGenerator } from '../stenograms/createOfflineStenogramGenerator.ts';
import type { StenogramGenerator } from '../stenograms/stenogram.ts';
import { anyStenogramStored } from '../stenograms/anyStenogramStored.ts';
import { configuredStenogramStore, type StenogramStore } from '../stenograms/store.ts';
import { configuredSubtitleSources, type SubtitleSource } from '../subtitles/sources.ts';
import { createLlmSummaryGenerator } from '../summaries/llmSummariser.ts';
import { createExtractiveGenerator } from '../summaries/offline/createExtractiveGenerator.ts';
import type { SummaryGenerator } from '../summaries/summary.ts';

/**
 * Every service a process uses, built once from the configuration (buildServices) and handed to the
 * API, the worker and the operator commands alike. Nothing below this is optional: a service the
 * configuration leaves out is `null`, said once here, never a default chosen further down.
 */
export interface Services {
  /** Video sources in the order a crawl asks them (the archive, the Data API, the Wayback Machine). */
  sources: VideoSource[];
  /** Where fetch_thumbnail reads the thumbnails of videos the Wayback found; null when the Wayback is not enabled. */
  waybackThumbnails: WaybackThumbnailFetcher | null;
  /** Where fetch_subtitles looks, oldest evidence first. */
  subtitleSources: SubtitleSource[];
  /** How check_status probes; null: none configured, statuses stay as the sources describe them. */
  statusProbe: StatusProbe | null;
  /** LLM_BASE_URL's client, one per process so LLM_CONCURRENCY holds for summaries and stenograms together; null: unset. */
  llm: LlmClient | null;
  /** Who writes summaries: the LLM when there is one, else the offline extractive generator. */
  summaryGenerator: SummaryGenerator;
  /** Who writes stenograms: the LLM (falling back to the offline one per chunk) when there is one, else the offline one. */
  stenogramGenerator: StenogramGenerator;
  /** Where stenograms' Markdown lives (STENOGRAM_STORE). */
  stenogramStore: StenogramStore;
  /** Full-text search: Typesense when TYPESENSE_URL is set, else Postgres. */
  search: SearchBackend;
  /** Where index_videos writes (Typesense, patient retries); null without TYPESENSE_URL. */
  typesense: TypesenseTarget | null;
  /** Seals webhook secrets and derives private feed URLs (SECRET_KEY, else DATA_DIR/secret.key). */
  serverKey: ServerKey;
}

/**
 * The composition root: each service from the configuration, unless `overrides` gives it (tests
 * and benchmarks put stand-ins there; what is overridden is not built, so a stand-in store needs no
 * bucket). The generators are built from `llm`, overridden or configured, so an override of the
 * client alone changes who writes. Asynchronous because the clients of optional services (the
 * OpenAI SDK, Typesense, S3) are imported only when the configuration names them: a process
 * without them (an operator command, most tests) does not load them.
 */
export async function buildServices(config: Config, deps: { sql: Sql; log: Logger }, overrides: Partial<Services> = {}): Promise<Services> {
  const given = async <K extends keyof Services>(key: K, build: () => Services[K] | Promise<Services[K]>): Promise<Services[K]> => {
    const value = overrides[key];
    return value === undefined ? build() : value;
  };
  const llm = await given('llm', async () => (await configuredLlmClient(config, deps.log)) ?? null);
  return {
    sources: await given('sources', () => configuredSources(config, () => activeArchiveRoots(deps.sql))),
    waybackThumbnails: await given('waybackThumbnails', () => configuredWaybackThumbnails(config) ?? null),
    subtitleSources: await given('subtitleSources', () => configuredSubtitleSources(config)),
    statusProbe: await given('statusProbe', () => configuredStatusProbe(config) ?? null),
    llm,
    summaryGenerator: await given('summaryGenerator', () => (llm ? createLlmSummaryGenerator(llm) : createExtractiveGenerator())),
    stenogramGenerator: await given('stenogramGenerator', () => {
      const offline = createOfflineStenogramGenerator();
      return llm ? createLlmStenogramGenerator(llm, offline) : offline;
    }),
    stenogramStore: await given('stenogramStore', () =>
      configuredStenogramStore(config, { storedBefore: () => anyStenogramStored(deps.sql) }),
    ),
    search: await given('search', () => configuredSearchBackend(config, deps.sql, deps.log)),
    typesense: await given('typesense', async () => (await configuredIndexingTarget(config, deps.log)) ?? null),
    serverKey: await given('serverKey', () => configuredServerKey(config, deps.sql)),
  };
}
