/** The part of autocannon's API the load client uses (autocannon ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      /** seconds */
      duration?: number;
      /** seconds before a request counts as timed out */
      timeout?: number;
      headers?: Record<string, string>;
    }

    interface Result {
      errors: number;
      timeouts: number;
    }

    interface Instance extends EventEmitter {
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
    }
  }

  function autocannon(options: autocannon.Options, callback: (error: Error | null, result: autocannon.Result) => void): autocannon.Instance;

  export = autocannon;
}
