/** A failure worth retrying later: rate limits, server errors, timeouts, network faults, bot checks. */
export class TransientError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TransientError';
  }
}

/** A definite answer that retrying will not change (404, 403 without a bot check, bad request). */
export class DefiniteError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body = '',
  ) {
    super(message);
    this.name = 'DefiniteError';
  }
}
