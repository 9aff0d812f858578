/**
 * Where stenograms' Markdown lives: one document per user and video, behind one small interface
 * (the rows are in Postgres). STENOGRAM_STORE picks the local disk (`file`) or an S3 bucket.
 */
import { ConfigError, type Config } from '../config.ts';
import { createFileStore } from './fileStore.ts';
import type { StoreRootOptions } from './fileStore.ts';
import { createS3Store } from './s3Store.ts';

/**
 * User ids are uuids, video ids 11 characters of YouTube's alphabet: every method validates both
 * and throws (a ZodError) on anything else, so no input can name a place outside the store.
 */
export interface StenogramStore {
  /** Writes atomically (readers see the old file or the new one, never half); answers size and SHA-256 hex. */
  put(userId: string, videoId: string, markdown: string): Promise<{ bytes: number; sha256: string }>;
  get(userId: string, videoId: string): Promise<string | undefined>;
  /** Idempotent: deleting what is not there is fine. */
  delete(userId: string, videoId: string): Promise<void>;
  /** Every stored document (for reconciling rows and files after a crash), with its last-modified time. */
  list(): AsyncIterable<{ userId: string; videoId: string; modifiedAt: Date }>;
  /** For logs and `afterimage config`: 'file:<dir>' or 's3://bucket/prefix' (never credentials). */
  readonly location: string;
}

/**
 * The store STENOGRAM_STORE names: `file` (DATA_DIR/stenograms) or `s3://bucket/optional/prefix`.
 * `fileRoot` tells the file store whether stenograms were stored before (an empty root is then not a new store).
 */
export function configuredStenogramStore(config: Config, fileRoot: StoreRootOptions = {}): StenogramStore {
  if (config.STENOGRAM_STORE === 'file') return createFileStore(`${config.dataDir}/stenograms`, fileRoot);
  const url = /^s3:\/\/([^/]+)\/?(.*)$/.exec(config.STENOGRAM_STORE);
  if (!url)
    throw new ConfigError([`STENOGRAM_STORE: expected file or s3://bucket/optional/prefix, got ${JSON.stringify(config.STENOGRAM_STORE)}`]);
  if ((config.S3_ACCESS_KEY_ID === undefined) !== (config.S3_SECRET_ACCESS_KEY === undefined)) {
    throw new ConfigError(['S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: set both, or neither to use the AWS default credentials']);
  }
  return createS3Store({
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    bucket: url[1]!,
    prefix: url[2]!,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    // S3-compatible servers rarely have a DNS name per bucket.
    forcePathStyle: config.S3_FORCE_PATH_STYLE ?? config.S3_ENDPOINT !== undefined,
  });
}
