import type { Queryable } from '../db/database.ts';

/** Whether any stenogram was ever stored (a row generated): the file store then treats an empty root as a volume gone missing. */
export async function anyStenogramStored(sql: Queryable): Promise<boolean> {
  const [row] = await sql<{ stored: boolean }[]>`select exists (select 1 from stenograms where status = 'generated') as stored`;
  return row!.stored;
}
