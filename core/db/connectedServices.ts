import type { Queryable } from './database.ts';

export interface ConnectedService {
  pid: number;
  /** start, api, worker, cli (an operator command): the role its main pool names. */
  role: string;
  version: string | null;
  /** Where it connects from: an address, or the local socket. */
  client: string;
  connectedSince: string;
  connections: number;
}

/**
 * The afterimage processes connected to this database now, on any machine, as PostgreSQL names their
 * connections (`afterimage:<pid>:<role>:<version>`, core/db/database.ts); this process left out.
 */
export async function connectedServices(sql: Queryable): Promise<ConnectedService[]> {
  return sql<ConnectedService[]>`
    with named as (
      select split_part(application_name, ':', 2)::int as pid,
        split_part(split_part(application_name, ':', 3), '-', 1) as role,
        nullif(split_part(application_name, ':', 4), '') as version,
        coalesce(host(client_addr), 'local socket') as client, backend_start
      from pg_stat_activity
      where datname = current_database() and application_name ~ '^afterimage:[0-9]+:'
        and split_part(application_name, ':', 2)::int <> ${process.pid}
    )
    select pid, min(role) as role, max(version) as version, client,
      to_json(min(backend_start))#>>'{}' as "connectedSince", count(*)::int as connections
    from named group by pid, client order by min(backend_start)`;
}
