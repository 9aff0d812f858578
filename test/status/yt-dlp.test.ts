import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ytDlpProbe } from '../../core/status/probes.ts';

// A stand-in for yt-dlp on the command line: it answers as yt-dlp does (JSON on stdout, or an
// "ERROR: [youtube] <id>: …" line on stderr and exit 1), chosen by the video id it is given.
const script = `#!/bin/sh
for last; do :; done
id=\${last##*v=}
case "$id" in
  availableAA) echo '{"id": "availableAA", "title": "Still here", "availability": "public"}' ;;
  removedAAAA) echo "ERROR: [youtube] $id: Video unavailable. This video has been removed by the uploader" >&2; exit 1 ;;
  privateAAAA) echo "ERROR: [youtube] $id: Private video. Sign in if you've been granted access to this video" >&2; exit 1 ;;
  claimedAAAA) echo "ERROR: [youtube] $id: Video unavailable. This video is no longer available due to a copyright claim by Example Films" >&2; exit 1 ;;
  botcheckAAA) echo "ERROR: [youtube] $id: Sign in to confirm you’re not a bot. Use --cookies-from-browser or --cookies for the authentication." >&2; exit 1 ;;
  throttledAA) echo "ERROR: [youtube] $id: Unable to download API page: HTTP Error 429: Too Many Requests" >&2; exit 1 ;;
  -dashfirstA) echo '{"id": "-dashfirstA"}' ;;
  *) echo "WARNING: unexpected" >&2; exit 2 ;;
esac
`;

let dir: string;
let command: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'afterimage-ytdlp-'));
  command = join(dir, 'yt-dlp');
  await writeFile(command, script);
  await chmod(command, 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the yt-dlp status probe', () => {
  it('reads yt-dlp answers: metadata is available, its error lines say why a video is gone, network trouble is transient', async () => {
    const probe = ytDlpProbe({ command });
    const seen = await probe([
      'availableAA',
      'removedAAAA',
      'privateAAAA',
      'claimedAAAA',
      'botcheckAAA',
      'throttledAA',
      '-dashfirstA',
      'strangeAAAA',
    ]);
    expect(seen.map((o) => [o.videoId, o.outcome, 'reason' in o ? o.reason : null])).toEqual([
      ['availableAA', 'available', null],
      ['removedAAAA', 'gone', 'removed_by_uploader'],
      ['privateAAAA', 'gone', 'private'],
      ['claimedAAAA', 'gone', 'copyright'],
      ['botcheckAAA', 'transient', null],
      ['throttledAA', 'transient', null],
      ['-dashfirstA', 'available', null],
      ['strangeAAAA', 'transient', null],
    ]);
    expect(seen[3]).toMatchObject({
      claimant: 'Example Films',
      source: 'yt_dlp',
      evidence: expect.stringMatching(/copyright claim by Example Films/),
    });
  });

  it('a missing or hanging yt-dlp is transient, never a deletion', async () => {
    const missing = await ytDlpProbe({ command: join(dir, 'not-installed') })(['removedAAAA']);
    expect(missing[0]!.outcome).toBe('transient');
    const hanging = join(dir, 'hang');
    await writeFile(hanging, '#!/bin/sh\nsleep 5\n');
    await chmod(hanging, 0o755);
    const slow = await ytDlpProbe({ command: hanging, timeoutMs: 200 })(['removedAAAA']);
    expect(slow[0]!.outcome).toBe('transient');
  });
});
