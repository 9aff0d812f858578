/**
 * `afterimage evidence verify <bundle.zip>`: checks an evidence bundle offline (no database, no
 * network), reading the file in place: nothing of it is extracted or written.
 */
import { open } from 'node:fs/promises';
import type { ZipBytes } from '../../core/evidence/readZip.ts';
import { verifyBundle } from '../../core/evidence/verifyBundle.ts';
import { output, parseOptions, subcommand, UsageError } from '../cli.ts';
import { progressBar } from '../progress.ts';

const USAGE = `usage: afterimage evidence verify <bundle.zip> [--json]

Checks an evidence bundle (GET /api/videos/:videoId/evidence or /api/watchlists/:id/evidence) offline:
every file's size and SHA-256 against manifest.json, manifest.json against README.txt's first line, no
file missing or added, each observations/<id>.body.gz decompressing to the SHA-256 its record gives, and
each status history consistent, and timestamp.tsr (an RFC 3161 token, when the exporting server had a
time-stamping authority): it must attest manifest.json's SHA-256, signed by the certificate it carries; the
time it attests and its signer are printed. Exits 0 when the bundle is intact, 1 naming each file that is not.`;

export async function evidenceCommand(args: string[]): Promise<void> {
  const [, verifyArgs] = subcommand(args, ['verify'], USAGE);
  const { values, positionals } = parseOptions(verifyArgs, {}, { usage: USAGE, positionals: true });
  const [path, ...rest] = positionals;
  if (!path || rest.length) throw new UsageError('give one bundle: npx afterimage evidence verify <bundle.zip>');
  const file = await open(path).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${path} (${error.code ?? error.message}); give the path of a downloaded bundle`);
  });
  try {
    const bytes: ZipBytes = {
      size: (await file.stat()).size,
      async read(offset, length) {
        const buffer = Buffer.alloc(Math.max(0, Math.min(length, this.size - offset)));
        const { bytesRead } = await file.read(buffer, 0, buffer.length, offset);
        return buffer.subarray(0, bytesRead);
      },
    };
    const bar = progressBar('checking');
    const verdict = await verifyBundle(bytes, undefined, (done, total) => bar.update(done, total));
    bar.done(`${verdict.checkedFiles} files match`);
    output(values.json, verdict, () =>
      verdict.ok
        ? `intact: ${verdict.checkedFiles} files match manifest.json (SHA-256 ${verdict.manifestSha256})${
            verdict.timestamp ? `\ntimestamped: ${verdict.timestamp.attestedAt} by ${verdict.timestamp.signer} (RFC 3161)` : ''
          }`
        : `NOT intact:\n${verdict.problems.map((problem) => `  ${problem.file}: ${problem.problem}`).join('\n')}`,
    );
    if (!verdict.ok) process.exitCode = 1;
  } finally {
    await file.close();
  }
}
