/**
 * Bundles the `afterimage` command into .build/ so that its processes start on JavaScript: tsx compiles
 * each of the ~360 modules of `afterimage api` at every start (2.7 CPU-s on a small core), the bundle
 * loads in 0.9. scripts/bin.mjs rebuilds it when a source changed (0.3–1 s), so it is never stale.
 *
 * Each build is a folder of its own (the entry point and the chunks the commands load lazily):
 * a process keeps loading chunks from the folder it started on while a newer build lands beside it.
 * current.json names the newest folder and the modification time of every source it was made of.
 * Plain JavaScript, like bin.mjs: it runs before anything can compile TypeScript.
 */
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const buildsDir = join(root, '.build');
const currentFile = join(buildsDir, 'current.json');
// The newest builds kept: a service started on an older one still finds its lazy chunks until then.
const KEPT_BUILDS = 3;

/** The bundle's entry point, built again first when a source changed; null when it cannot be (a read-only install). */
export async function builtEntry() {
  try {
    return (await freshEntry()) ?? (await build());
  } catch {
    return null;
  }
}

async function freshEntry() {
  const current = await readFile(currentFile, 'utf8').then(JSON.parse, () => null);
  if (!current) return null;
  const times = await Promise.all(Object.keys(current.sources).map((source) => modified(source)));
  const unchanged = Object.values(current.sources).every((time, i) => time === times[i]);
  return unchanged ? join(buildsDir, current.folder, 'afterimage.js') : null;
}

async function build() {
  const { build: bundle } = await import('esbuild');
  const startedAt = Date.now();
  const folder = `${String(startedAt).padStart(15, '0')}-${process.pid}`;
  const outdir = join(buildsDir, folder);
  const { metafile } = await bundle({
    absWorkingDir: root,
    entryPoints: ['scripts/afterimage.ts'],
    outdir,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    packages: 'external',
    keepNames: true,
    sourcemap: true,
    metafile: true,
    logLevel: 'silent',
    plugins: [sourceRelativeImportMeta(outdir)],
  });
  const sources = Object.keys(metafile.inputs);
  const times = await Promise.all(sources.map((source) => modified(source)));
  // A source saved while esbuild read it may be in the bundle in either version: build again next time.
  if (times.some((time) => time === null || time >= startedAt)) return join(outdir, 'afterimage.js');
  const next = `${currentFile}.${process.pid}`;
  await writeFile(next, JSON.stringify({ folder, sources: Object.fromEntries(sources.map((source, i) => [source, times[i]])) }));
  await rename(next, currentFile);
  await pruneOlderBuilds();
  return join(outdir, 'afterimage.js');
}

async function modified(source) {
  return stat(join(root, source)).then(
    (stats) => stats.mtimeMs,
    () => null,
  );
}

/** import.meta.url in a chunk names the chunk: each module's own URL is rebuilt from where it came from. */
function sourceRelativeImportMeta(outdir) {
  return {
    name: 'source-relative-import-meta',
    setup(esbuild) {
      esbuild.onLoad({ filter: /\.tsx?$/ }, async ({ path }) => {
        const source = await readFile(path, 'utf8');
        if (/import\.meta\.(dirname|filename)/.test(source))
          throw new Error(
            `${relative(root, path)}: use new URL(…, import.meta.url), which the bundle rewrites, not import.meta.dirname or filename`,
          );
        const url = `new URL(${JSON.stringify(relative(outdir, path))}, import.meta.url).href`;
        return { contents: source.replaceAll('import.meta.url', url), loader: path.endsWith('.tsx') ? 'tsx' : 'ts' };
      });
    },
  };
}

async function pruneOlderBuilds() {
  const folders = (await readdir(buildsDir, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  const older = folders.sort().reverse().slice(KEPT_BUILDS);
  await Promise.all(older.map((name) => rm(join(buildsDir, name), { recursive: true, force: true })));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const entry = (await freshEntry()) ?? (await build());
  console.log(`afterimage: built ${relative(root, entry)}`);
}
