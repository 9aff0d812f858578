/**
 * A local S3-compatible server: s3rver (objects on disk, path-style, S3's XML wire format, SigV4
 * signatures checked against the dummy account S3RVER/S3RVER), with what S3 does and s3rver lacks:
 *
 * - a PutObject's `x-amz-checksum-sha256` or `Content-MD5` is checked against the bytes received,
 *   a mismatch answered 400 BadDigest as S3 does (s3rver ignores both);
 * - listings may be cut at `maxKeysPerPage` keys whatever MaxKeys asked, as S3 may, so clients
 *   must follow continuation tokens.
 *
 * Scriptable over HTTP: `POST /__stand-in/corrupt-next-put` flips a byte of the next PutObject's body
 * on arrival (a corruption in transit). It runs in a child process because s3rver's continuation
 * tokens use DES, which Node's OpenSSL 3 offers only with --openssl-legacy-provider.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface StandInOptions {
  directory: string;
  bucket: string;
  maxKeysPerPage?: number;
}

export interface S3StandIn {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  corruptNextPut(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 (a free port) over `directory`, with `bucket` made. */
export async function startS3Server(options: StandInOptions): Promise<S3StandIn> {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, S3_STAND_IN: JSON.stringify(options) },
    // The child ends when its stdin does: on close(), or when this process dies.
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /^listening (\d+)$/m.exec(output);
      if (line) resolve(Number(line[1]));
    });
    child.once('exit', (code) => reject(new Error(`the S3 stand-in exited (${code}) before listening`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket: options.bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    async corruptNextPut() {
      const answer = await fetch(`${endpoint}/__stand-in/corrupt-next-put`, { method: 'POST' });
      if (!answer.ok) throw new Error(`the S3 stand-in answered ${answer.status}`);
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}

// What the child uses of s3rver (an untyped CommonJS package) and of Koa, which it extends.
interface KoaContext {
  method: string;
  path: string;
  req: NodeJS.ReadableStream | Buffer;
  status: number;
  type: string;
  body: unknown;
  get(header: string): string;
}
interface ListOptions {
  maxKeys?: number;
}
interface S3rverServer {
  middleware: ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[];
  store: { listObjects(bucket: string, options: ListOptions): Promise<unknown> };
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverServer;

const badDigest = (what: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>BadDigest</Code><Message>The ${what} you specified did not match the calculated checksum.</Message></Error>`;

/** The child: s3rver plus the checks above, printing `listening <port>` once it accepts requests. */
async function serve(options: StandInOptions): Promise<void> {
  const require = createRequire(import.meta.url);
  const S3rver = require('s3rver') as S3rverConstructor;
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory: options.directory,
    silent: true,
    configureBuckets: [{ name: options.bucket }],
  });
  let corruptNext = false;
  server.middleware.unshift(async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path === '/__stand-in/corrupt-next-put') {
      corruptNext = true;
      ctx.status = 204;
      return;
    }
    const sha256 = ctx.get('x-amz-checksum-sha256');
    const md5 = ctx.get('content-md5');
    if (ctx.method === 'PUT' && (sha256 || md5)) {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req as NodeJS.ReadableStream) chunks.push(Buffer.from(chunk));
      const body = Buffer.concat(chunks);
      if (corruptNext && body.length > 0) body[0] = body[0]! ^ 0xff;
      corruptNext = false;
      const mismatch =
        sha256 && createHash('sha256').update(body).digest('base64') !== sha256
          ? 'SHA256'
          : md5 && createHash('md5').update(body).digest('base64') !== md5
            ? 'Content-MD5'
            : undefined;
      if (mismatch) {
        ctx.status = 400;
        ctx.type = 'application/xml';
        ctx.body = badDigest(mismatch);
        return;
      }
      ctx.req = body; // s3rver stores a Buffer body as it is
    }
    await next();
  });
  const { maxKeysPerPage } = options;
  if (maxKeysPerPage !== undefined) {
    const listObjects = server.store.listObjects.bind(server.store);
    server.store.listObjects = (bucket, list) => listObjects(bucket, { ...list, maxKeys: Math.min(list.maxKeys ?? 1000, maxKeysPerPage) });
  }
  const { port } = await server.run();
  process.stdin.once('end', () => void server.close().then(() => process.exit(0))).resume();
  process.stdout.write(`listening ${port}\n`);
}

if (process.env.S3_STAND_IN && process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await serve(JSON.parse(process.env.S3_STAND_IN) as StandInOptions);
}
