/**
 * A source's answer as evidence keeps it: the request as the platform would be asked it, with no
 * secret; or a file of the local yt-dlp archive, named by its path inside the archive folder.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, extname, relative, sep } from 'node:path';
import { recordAnswers, type RawAnswer } from './http.ts';

/** An HTTP answer, or an archive file (no HTTP status). */
export type KeptAnswer = Omit<RawAnswer, 'status'> & { status: number | null };

/** Query parameters that carry credentials: removed (the value replaced) from every kept URL. */
const SECRET_PARAMS = /^(key|api_?key|access_token|token|auth|signature|sig)$/i;

/**
 * The request URL as kept: on `publicOrigin` (the platform's own origin; the configured one may be an
 * internal proxy nobody outside should learn of), every credential parameter's value replaced by ***.
 */
function keptRequestUrl(requested: string, publicOrigin: string): string {
  const url = new URL(requested);
  const kept = new URL(`${url.pathname}${url.search}`, publicOrigin);
  for (const name of [...kept.searchParams.keys()]) if (SECRET_PARAMS.test(name)) kept.searchParams.set(name, '***');
  return kept.toString().replaceAll('%2A%2A%2A', '***');
}

/** The answer with its URL as kept. */
const keptAnswer = (answer: RawAnswer, publicOrigin: string): KeptAnswer => ({
  ...answer,
  url: keptRequestUrl(answer.url, publicOrigin),
});

/** `work`'s result and the last answer a source gave inside it, as evidence keeps it. */
export async function withLastAnswer<T>(publicOrigin: string, work: () => Promise<T>): Promise<{ result: T; answer?: KeptAnswer }> {
  let answer: KeptAnswer | undefined;
  const result = await recordAnswers((raw) => {
    answer = keptAnswer(raw, publicOrigin);
  }, work);
  return answer ? { result, answer } : { result };
}

/**
 * How a file of the archive is named in kept evidence: its path inside the folder of `folders` that
 * holds it (the deepest), '/'-separated; its name alone when none does. Never the host's absolute path.
 */
export function archiveFileName(path: string, folders: readonly string[]): string {
  const inside = folders
    .map((folder) => relative(folder, path))
    .filter((name) => name !== '' && !name.startsWith('..') && !name.startsWith(sep))
    .sort((a, b) => a.length - b.length)[0];
  return (inside ?? basename(path)).split(sep).join('/');
}

const FILE_TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.vtt': 'text/vtt',
  '.srt': 'application/x-subrip',
  '.json3': 'application/json',
};

/**
 * A file of the local yt-dlp archive as a kept answer: its bytes as they are now, named `name`
 * (archiveFileName), answered when yt-dlp last wrote it (the file's mtime: what it recorded, and when,
 * not when Afterimage happened to read it).
 */
export async function archiveFileAnswer(path: string, name: string): Promise<KeptAnswer> {
  const [body, facts] = await Promise.all([readFile(path), stat(path)]);
  return {
    url: name,
    status: null,
    contentType: FILE_TYPES[extname(path).toLowerCase()] ?? 'text/plain',
    body,
    answeredAt: facts.mtime,
  };
}
