/**
 * Stenograms' Markdown in an S3 bucket (AWS, or an S3-compatible server such as MinIO): keys
 * `<prefix>stenograms/<userId>/<videoId>.md`. Implements StenogramStore (store.ts, which imports this file).
 * A PutObject replaces an object whole, so writes are atomic without a temporary object.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { documentIds } from './documentIds.ts';

export interface S3StoreOptions {
  /** An S3-compatible server's URL; unset: AWS. */
  endpoint?: string;
  region: string;
  bucket: string;
  /** Prepended to every key ('' or a folder such as `afterimage/`; a missing final slash is added). */
  prefix: string;
  /** Both or neither; unset: the SDK's default credential chain (environment, profile, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

// Postgres prints uuids in lower case: one key per user whatever case the caller used.

export function createS3Store(options: S3StoreOptions) {
  const prefix = options.prefix === '' || options.prefix.endsWith('/') ? options.prefix : `${options.prefix}/`;
  const folder = `${prefix}stenograms/`;
  const documentKey = new RegExp(`^${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([0-9a-f-]{36})/([A-Za-z0-9_-]{11})\\.md$`);
  const { bucket } = options;
  // The SDK loads on first use (about a second, and a warning on Node 20) rather than in every process that could use S3.
  let connection: Promise<{ sdk: typeof import('@aws-sdk/client-s3'); client: import('@aws-sdk/client-s3').S3Client }> | undefined;
  const connect = () =>
    (connection ??= import('@aws-sdk/client-s3').then((sdk) => ({
      sdk,
      client: new sdk.S3Client({
        endpoint: options.endpoint,
        region: options.region,
        forcePathStyle: options.forcePathStyle,
        credentials:
          options.accessKeyId && options.secretAccessKey
            ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
            : undefined,
      }),
    })));

  /** The only way from ids to a key: both validated, so no input can name another key. */
  function keyOf(userId: string, videoId: string): string {
    const ids = documentIds.parse({ userId, videoId });
    return `${folder}${ids.userId}/${ids.videoId}.md`;
  }

  return {
    location: `s3://${bucket}/${prefix}`,

    async put(userId: string, videoId: string, markdown: string) {
      const key = keyOf(userId, videoId);
      const body = Buffer.from(markdown, 'utf8');
      const digest = createHash('sha256').update(body).digest();
      const { sdk, client } = await connect();
      // The server recomputes the SHA-256 and refuses the upload (BadDigest) when the bytes it got differ.
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentType: 'text/markdown; charset=utf-8',
          ChecksumSHA256: digest.toString('base64'),
        }),
      );
      return { bytes: body.length, sha256: digest.toString('hex') };
    },

    async get(userId: string, videoId: string) {
      const key = keyOf(userId, videoId);
      const { sdk, client } = await connect();
      try {
        const answer = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
        return await answer.Body?.transformToString('utf-8');
      } catch (error) {
        if ((error as Error).name === 'NoSuchKey') return undefined;
        throw error;
      }
    },

    // S3 answers 204 for a key that is not there: idempotent as it is.
    async delete(userId: string, videoId: string) {
      const key = keyOf(userId, videoId);
      const { sdk, client } = await connect();
      await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },

    async *list() {
      const { sdk, client } = await connect();
      for await (const page of sdk.paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: folder })) {
        for (const object of page.Contents ?? []) {
          const match = documentKey.exec(object.Key ?? '');
          if (!match || !z.uuid().safeParse(match[1]).success) continue;
          yield { userId: match[1]!, videoId: match[2]!, modifiedAt: object.LastModified ?? new Date(0) };
        }
      }
    },
  };
}
