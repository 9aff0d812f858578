import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The web app's CSS and JavaScript, served from the package under content-hashed names
 * (`/assets/site.3f2a9c1e.css`): a new release changes the name, so a browser may keep each file a year.
 */
const ASSETS_DIR = fileURLToPath(new URL('assets/', import.meta.url));
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  url: string;
  body: Buffer;
  type: string;
}

function loadAssets(): Map<string, Asset> {
  const byName = new Map<string, Asset>();
  for (const name of readdirSync(ASSETS_DIR)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(join(ASSETS_DIR, name));
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    const extension = extname(name);
    byName.set(name, { url: `/assets/${name.slice(0, -extension.length)}.${hash}${extension}`, body, type });
  }
  return byName;
}

const assets = loadAssets();
const byUrl = new Map([...assets.values()].map((asset) => [asset.url, asset]));

/** The hashed URL of a file in api/web/assets/; a name that is not there is a programming error. */
export function assetUrl(name: string): string {
  const asset = assets.get(name);
  if (!asset) throw new Error(`no web asset ${name} in ${ASSETS_DIR}`);
  return asset.url;
}

/** Answers `GET /assets/…` with the file whose hashed name it is; false when no asset has that URL. */
export function sendAsset(path: string, res: ServerResponse): boolean {
  const asset = byUrl.get(path);
  if (!asset) return false;
  res.writeHead(200, {
    'Content-Type': asset.type,
    'Content-Length': asset.body.length,
    'Cache-Control': 'public, max-age=31536000, immutable',
  });
  res.end(asset.body);
  return true;
}
