import { describe, expect, it } from 'vitest';
import { createLogger, graphileLogger } from '../../core/log.ts';

/** graphile-worker's messages as the service logs them: level and message of each line written at debug. */
async function logged(
  report: (logger: Awaited<ReturnType<typeof graphileLogger>>) => void,
): Promise<Array<{ level: string; msg: string }>> {
  const lines: string[] = [];
  report(await graphileLogger(createLogger('debug', {}, (line) => void lines.push(line))));
  return lines.map((line) => JSON.parse(line) as { level: string; msg: string });
}

describe("graphile-worker's log", () => {
  it('reports a lost database connection at debug, however pg words it (the circuit says once that the database is gone)', async () => {
    const lost = [
      Object.assign(new Error('connect ECONNREFUSED /run/.s.PGSQL.5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      new Error('Client has encountered a connection error and is not queryable'),
      // A killed postmaster's backends close their sockets without a word: pg's own message, no code.
      new Error('Connection terminated unexpectedly'),
    ];
    const lines = await logged((logger) => {
      for (const error of lost) logger.error('PostgreSQL active client generated error: ' + error.message, { error });
    });
    expect(lines.map((line) => line.level)).toEqual(lost.map(() => 'debug'));
  });

  it("keeps a job's failure and any other error at error", async () => {
    const lines = await logged((logger) => {
      logger.error('Failed task 2 (crawl_channel)', { failure: true, error: new Error('Connection terminated unexpectedly') });
      logger.error('something else broke', { error: new Error('Connection terminated') });
    });
    expect(lines.map((line) => line.level)).toEqual(['error', 'error']);
  });
});
