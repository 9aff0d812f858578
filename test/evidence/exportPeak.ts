/**
 * Run by export-memory.test.ts in a child process of its own: exports one video's bundle from the
 * database at argv[2] into a hash (nothing kept), and prints the peak RSS over the RSS before it, in bytes.
 */
import { createHash } from 'node:crypto';
import { connect } from '../../core/db/database.ts';
import { writeBundle } from '../../core/evidence/bundle.ts';

const [url, videoId] = process.argv.slice(2) as [string, string];
const sql = connect(url, { max: 2, role: 'test' });
await sql`select 1`;
const baseline = process.memoryUsage().rss;
let peak = baseline;
const sample = () => {
  peak = Math.max(peak, process.memoryUsage().rss);
};
const timer = setInterval(sample, 2);
const hash = createHash('sha256');
let bytes = 0;
await sql.begin('isolation level repeatable read read only', (tx) =>
  writeBundle(tx, { kind: 'video', videoId }, async (chunk) => {
    bytes += chunk.length;
    hash.update(chunk);
    sample();
    // A client reading as fast as it can: the event loop turns between pieces, as with a socket.
    await new Promise((resolve) => setImmediate(resolve));
  }),
);
clearInterval(timer);
sample();
await sql.end();
process.stdout.write(`${JSON.stringify({ peakOverBaseline: peak - baseline, bytes, sha256: hash.digest('hex') })}\n`);
