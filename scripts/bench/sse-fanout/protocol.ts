/** The messages between sse-fanout (the parent) and its clients' process (client.ts), and the clients' report. */
export interface FanoutClientSpec {
  path: string;
  key: string;
}

export type ParentMessage =
  | { type: 'connect'; host: string; port: number; clients: FanoutClientSpec[]; timeoutMs: number; expectedDeliveries: number }
  | { type: 'finish'; acks: number[]; expectedEvents: number; timeoutMs: number };

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
  min: number;
}

export interface FanoutReport {
  clients: number;
  /** Clients whose stream answered 200 and passed its snapshot. */
  connected: number;
  connectFailures: string[];
  /** All requests sent → the last client past its snapshot, ms; and per client, ms. */
  rampMs: number;
  connectMs: LatencySummary;
  /** Live events (with a c: id) received, over all clients. */
  delivered: number;
  expectedPerClient: number;
  /** Clients that received fewer / more events than expected, and the events missing in all. */
  clientsShort: number;
  missing: number;
  /** Events that did not come after the previous one of the same client (a repeat or a reordering). */
  duplicatesOrReordered: number;
  batches: number;
  heartbeats: number;
  /** arrival − sentAt (stamped just before the insert, so it includes the commit itself), ms */
  fromSentAt: LatencySummary;
  /** arrival − the publisher's commit acknowledgement, ms */
  fromCommit: LatencySummary;
  /** Per commit: the last client's arrival − the commit acknowledgement (when all clients had it), ms */
  lastClientPerCommit: LatencySummary;
  /** The same, commit by commit (null when no client got the commit), ms: the timeline of the run. */
  lastClientByCommit: Array<number | null>;
  /** Streams the API ended before search:complete, each resumed with Last-Event-ID. */
  resumed: number;
  /** Clients whose stream delivered search:complete and then ended. */
  completed: number;
  ended: number;
  /** Clients still open when the finish timeout passed. */
  stillOpen: number;
  errors: string[];
  cpuUs: number;
  maxRssMiB: number;
}

export type ClientMessage =
  | { type: 'connected'; connected: number; failures: string[]; rampMs: number }
  | { type: 'report'; report: FanoutReport }
  | { type: 'failed'; message: string };
