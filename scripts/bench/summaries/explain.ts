import type postgres from 'postgres';
import type { Sql } from '../../../core/db/database.ts';
import { recordingPool } from '../lib/recordingPool.ts';

/** A parameter as an SQL literal, for EXECUTE of a prepared statement (the recorded values are strings, numbers or null). */
const literal = (value: unknown): string =>
  value === null || value === undefined
    ? 'null'
    : typeof value === 'number' || typeof value === 'bigint'
      ? String(value)
      : `'${String(value).replaceAll("'", "''")}'`;

/**
 * EXPLAIN (ANALYZE, BUFFERS) of every statement one call runs, with the plan it gets for its
 * parameters (custom) and the one a prepared statement gets once PostgreSQL stops replanning it
 * (generic: postgres.js prepares every statement, and after 5 executions the plan cache may keep
 * the generic plan). The call is made once through a pool that records its statements; they are
 * then explained in a transaction that is rolled back, and run 8 times more on one connection to
 * read from pg_prepared_statements which plans were used.
 */
export interface PlanTiming {
  statement: string;
  customMs: number | null;
  genericMs: number | null;
  genericRuns: number | null;
  customRuns: number | null;
}

export async function explainCall(url: string, call: (sql: Sql) => Promise<unknown>): Promise<{ plan: string; timings: PlanTiming[] }> {
  const { sql, statements, stop } = recordingPool(url);
  try {
    await call(sql);
    stop();
    const selects = statements.filter(({ text }) => /^\s*(with|select)\b/i.test(text) && !text.includes('pg_catalog.'));
    const plans: string[] = [];
    const timings: PlanTiming[] = [];
    const executionMs = (rows: postgres.RowList<postgres.Row[]>) => {
      const line = rows.map((row) => String(row['QUERY PLAN'])).find((text) => text.startsWith('Execution Time:'));
      return line ? Number(/([\d.]+) ms/.exec(line)?.[1]) : null;
    };
    await sql
      .begin(async (tx) => {
        for (const [index, { text, params }] of selects.entries()) {
          const custom = await tx.unsafe(`explain (analyze, buffers, format text) ${text}`, params as never[]);
          await tx.unsafe(`prepare bench_explain_${index} as ${text}`);
          await tx.unsafe(`set local plan_cache_mode = force_generic_plan`);
          const generic = await tx.unsafe(
            `explain (analyze, buffers, format text) execute bench_explain_${index}${params.length ? `(${params.map(literal).join(', ')})` : ''}`,
          );
          await tx.unsafe(`set local plan_cache_mode = auto`);
          const lines = (rows: postgres.RowList<postgres.Row[]>) => rows.map((row) => row['QUERY PLAN']).join('\n');
          timings.push({
            statement: text.replace(/\s+/g, ' ').trim(),
            customMs: executionMs(custom),
            genericMs: executionMs(generic),
            genericRuns: null,
            customRuns: null,
          });
          plans.push(
            `${text.replace(/\s+/g, ' ').trim()}\nparameters: ${params.map(literal).join(', ')}\n-- custom plan (for these parameters):\n${lines(custom)}\n-- generic plan (a prepared statement's, parameters unknown):\n${lines(generic)}`,
          );
        }
        throw new Rollback();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Rollback)) throw error;
      });
    for (const [index, { text, params }] of selects.entries()) {
      for (let run = 0; run < 8; run++) await sql.unsafe(text, params as never[], { prepare: true });
      const [used] = await sql<
        { generic: number; custom: number }[]
      >`select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement = ${text}`;
      if (used) Object.assign(timings[index]!, { genericRuns: used.generic, customRuns: used.custom });
      plans[index] +=
        `\n-- the same statement run 9 times on one connection, as the pool runs it: ${used ? `${used.generic} generic and ${used.custom} custom plans` : 'not found in pg_prepared_statements'}`;
    }
    return { plan: plans.join('\n\n'), timings };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
class Rollback extends Error {}
