import { readFileSync } from 'node:fs';
import { connect } from './core/db/database.ts';
import { embeddedUrl } from './core/db/embedded.ts';
const log = '/tmp/watch-bench3.log';
const wait = async (re: RegExp) => {
  for (;;) {
    if (re.test(readFileSync(log, 'utf8'))) return;
    await new Promise((r) => setTimeout(r, 200));
  }
};
await wait(/fresh database/);
const sql = connect(embeddedUrl('/work/main/.afterimage-bench', 'postgres'), { max: 1, role: 'test' });
await sql`create extension if not exists pg_stat_statements`;
const snap = async () =>
  new Map(
    (
      await sql<{ q: string; calls: number; ms: number; rows: number }[]>`
  select left(regexp_replace(query, '\s+', ' ', 'g'), 160) as q, sum(calls)::float8 as calls, sum(total_exec_time)::float8 as ms, sum(rows)::float8 as rows
  from pg_stat_statements group by 1`
    ).map((r) => [r.q, r]),
  );
await wait(/deletions confirmed/);
const a = await snap();
await wait(/deliveries of 1000 deletions/);
const b = await snap();
const diff = [...b.values()]
  .map((r) => {
    const o = a.get(r.q);
    return { q: r.q, calls: r.calls - (o?.calls ?? 0), ms: r.ms - (o?.ms ?? 0), rows: r.rows - (o?.rows ?? 0) };
  })
  .filter((r) => r.calls > 0)
  .sort((x, y) => y.ms - x.ms);
const total = diff.reduce((s, r) => s + r.ms, 0);
console.log(`total exec ms ${total.toFixed(0)}`);
for (const r of diff.slice(0, 25))
  console.log(`${r.ms.toFixed(0).padStart(7)} ms ${String(r.calls).padStart(7)} calls ${String(r.rows).padStart(7)} rows  ${r.q}`);
await sql.end();
