/**
 * Why a call failed, for callers that react differently: `unavailable` (transient failures outlived
 * the retries), `rejected` (the server refused the request: key, model name, request shape),
 * `malformed` (the model answered twice with JSON that does not satisfy the schema).
 */
export class LlmError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'rejected' | 'malformed',
    message: string,
    readonly details: { status?: number; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.name = 'LlmError';
  }
}
