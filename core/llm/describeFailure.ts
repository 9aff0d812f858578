import { LlmError } from './llmError.ts';

/**
 * What a client is told of a generator's failure: an LlmError without the endpoint's address or
 * anything the server said (the operator's log has those); any other error as it is.
 */
export function describeGeneratorFailure(error: unknown): string {
  if (!(error instanceof LlmError)) return (error as Error).message;
  const status = error.details.status ? ` (HTTP ${error.details.status})` : '';
  if (error.kind === 'unavailable') return `the language model did not answer${status}, even after retries; try again later`;
  if (error.kind === 'rejected')
    return `the language model refused the request${status}; the operator should check LLM_MODEL and LLM_API_KEY`;
  return 'the language model answered twice with JSON that does not fit the schema asked for';
}
