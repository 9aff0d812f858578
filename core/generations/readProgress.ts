import type { Queryable } from '../db/database.ts';
import type { GenerationKind, GenerationRow } from './generationKind.ts';

/** A generation's latest progress as its job last wrote it (the payload of its progress event); undefined before the first. */
export async function readProgress(sql: Queryable, kind: GenerationKind<GenerationRow, never>, id: string): Promise<{ stage: string; percent: number } | undefined> {
  const [row] = await sql<{ progress: { stage: string; percent: number } | null }[]>`select progress from ${sql(kind.table)} where id = ${id}`;
  return row?.progress ?? undefined;
}
