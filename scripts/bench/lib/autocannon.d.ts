/** The part of autocannon's programmatic API the load client uses (autocannon ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Client {
      setHeaders(headers: Record<string, string>): void;
    }

    interface Options {
      url: string;
      method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      connections?: number;
      pipelining?: number;
      /** seconds */
      duration?: number;
      /** seconds before a request counts as timed out */
      timeout?: number;
      headers?: Record<string, string>;
      setupClient?: (client: Client) => void;
    }

    interface Result {
      duration: number;
      start: Date;
      finish: Date;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      mismatches: number;
      statusCodeStats: Record<string, { count: number }>;
      requests: { total: number; average: number; mean: number; stddev: number; min: number; max: number; sent: number };
      latency: {
        average: number;
        mean: number;
        stddev: number;
        min: number;
        max: number;
        p50: number;
        p90: number;
        p99: number;
        p99_9: number;
      };
      '2xx': number;
    }

    interface Instance extends EventEmitter {
      stop(): void;
      on(event: 'response', listener: (client: Client, statusCode: number, resBytes: number, responseTime: number) => void): this;
      on(event: 'reqError', listener: (error: Error) => void): this;
      on(event: 'tick', listener: (tick: { counter: number; bytes: number }) => void): this;
      on(event: string, listener: (...args: unknown[]) => void): this;
    }
  }

  function autocannon(options: autocannon.Options, callback: (error: Error | null, result: autocannon.Result) => void): autocannon.Instance;

  export = autocannon;
}
