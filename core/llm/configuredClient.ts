import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { createLlmClient } from './openaiClient.ts';
import type { LlmClient } from './types.ts';

/** The OpenAI-compatible endpoint of LLM_BASE_URL, one client (and one concurrency cap) per process; none when unset. */
export function configuredLlmClient(config: Config, log: Logger): LlmClient | undefined {
  if (!config.LLM_BASE_URL) return undefined;
  return createLlmClient({
    baseUrl: config.LLM_BASE_URL,
    ...(config.LLM_API_KEY ? { apiKey: config.LLM_API_KEY } : {}),
    model: config.LLM_MODEL,
    contextTokens: config.LLM_CONTEXT_TOKENS,
    concurrency: config.LLM_CONCURRENCY,
    timeoutMs: config.LLM_TIMEOUT_MS,
    log,
  });
}
