/**
 * GET /api/docs: the OpenAPI document rendered by Swagger UI, every file served from here (the
 * swagger-ui-dist package and our initializer), so the page asks no other host for anything.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { codingFor, encodeBody, isCompressible, type Coding, addVary } from '../http/representation.ts';
import { binaryBody, defineRoute, handled } from '../http/route.ts';

const require = createRequire(import.meta.url);
const swaggerDir = dirname(require.resolve('swagger-ui-dist/package.json'));
const swaggerVersion = (JSON.parse(readFileSync(join(swaggerDir, 'package.json'), 'utf8')) as { version: string }).version;
const initializer = fileURLToPath(new URL('../static/swagger-init.js', import.meta.url));
const initializerHash = createHash('sha256').update(readFileSync(initializer)).digest('hex').slice(0, 12);

const ASSET_PATH = '/api/docs/assets';
const CONTENT_TYPES = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8', png: 'image/png' } as const;

/** One file of the page: the name it is asked for by (which holds the version of its content) and where it is on disk. */
const asset = (name: string, path: string) => ({ name, path, url: `${ASSET_PATH}/${name}` });
const styles = asset(`swagger-ui-${swaggerVersion}.css`, join(swaggerDir, 'swagger-ui.css'));
const bundle = asset(`swagger-ui-bundle-${swaggerVersion}.js`, join(swaggerDir, 'swagger-ui-bundle.js'));
const largeIcon = asset(`favicon-32x32-${swaggerVersion}.png`, join(swaggerDir, 'favicon-32x32.png'));
const smallIcon = asset(`favicon-16x16-${swaggerVersion}.png`, join(swaggerDir, 'favicon-16x16.png'));
const starter = asset(`swagger-init-${initializerHash}.js`, initializer);
/** A name always means the same bytes, so each file may be cached for a year. */
const assets = new Map([styles, bundle, largeIcon, smallIcon, starter].map((file) => [file.name, file.path]));
const assetNames = [...assets.keys()] as [string, ...string[]];

/**
 * Scripts, styles, images and requests from this origin only: no inline script, no other host.
 * data: images too, which are no request at all: Swagger UI's stylesheet draws its icons so.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Afterimage API</title>
<link rel="stylesheet" href="${styles.url}">
<link rel="icon" type="image/png" href="${largeIcon.url}" sizes="32x32">
<link rel="icon" type="image/png" href="${smallIcon.url}" sizes="16x16">
</head>
<body>
<noscript><p>This page renders the API's OpenAPI document, <a href="/api/openapi.json">/api/openapi.json</a>, with Swagger UI, which needs JavaScript.</p></noscript>
<div id="swagger-ui" data-url="/api/openapi.json"></div>
<script src="${bundle.url}"></script>
<script src="${starter.url}"></script>
</body>
</html>
`;

function send(res: ServerResponse, contentType: string, body: string | Buffer, headers: Record<string, string>) {
  res.writeHead(200, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

const docsPageRoute = defineRoute({
  method: 'GET',
  path: '/api/docs',
  tag: 'System',
  summary: "This API's reference as a web page: /api/openapi.json rendered by Swagger UI",
  description: `Swagger UI ${swaggerVersion}, served from this server with all its files (no other host is asked for anything; the Content-Security-Policy allows only this origin). Revalidated on every visit; its files (/api/docs/assets/…) are named by version and cached for a year. Not rate limited, like the document: it needs no database.`,
  auth: 'public',
  rateLimited: false,
  media: { 'text/html': z.string() },
  async handler({ res }) {
    send(res, 'text/html; charset=utf-8', page, {
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'Cache-Control': 'no-cache',
      'Referrer-Policy': 'no-referrer',
    });
    return handled;
  },
});

/**
 * Files read and coded once per coding, when first asked for, and kept (a failed read is tried again
 * next time): the 1.7 MB script costs brotli once per process instead of once per visit.
 */
const loaded = new Map<string, Promise<{ body: Buffer; coded: boolean }>>();
const contentOf = (name: string, coding: Coding) => {
  const key = `${coding} ${name}`;
  let content = loaded.get(key);
  if (!content) {
    content = readFile(assets.get(name)!).then((body) => encodeBody(body, coding));
    loaded.set(key, content);
    content.catch(() => loaded.delete(key));
  }
  return content;
};

const docsAssetRoute = defineRoute({
  method: 'GET',
  path: `${ASSET_PATH}/:file`,
  tag: 'System',
  summary: "A file of the /api/docs page (Swagger UI's script, styles and icons, and the script that starts it)",
  description:
    'Each name carries the version of its content, so each is cached for a year (immutable); a page of another version names other files. Scripts and styles are sent br or gzip as Accept-Encoding allows, coded once per process.',
  auth: 'public',
  rateLimited: false,
  params: z.strictObject({
    file: z.enum(assetNames, { message: `no such file of the docs page (its files are ${assetNames.join(', ')}); reload /api/docs` }),
  }),
  media: { 'text/css': z.string(), 'text/javascript': z.string(), 'image/png': binaryBody },
  async handler({ params, req, res }) {
    const contentType = CONTENT_TYPES[params.file.slice(params.file.lastIndexOf('.') + 1) as keyof typeof CONTENT_TYPES];
    const coding = codingFor(req, contentType);
    const content = await contentOf(params.file, coding);
    if (isCompressible(contentType)) addVary(res, ['Accept-Encoding']);
    send(res, contentType, content.body, {
      'Cache-Control': 'public, max-age=31536000, immutable',
      ...(content.coded ? { 'Content-Encoding': coding } : {}),
    });
    return handled;
  },
});

export const docsRoutes = [docsPageRoute, docsAssetRoute];
