import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { LlmClient } from './types.ts';

/**
 * The OpenAI-compatible endpoint of LLM_BASE_URL, one client (and one concurrency cap) per process; none when unset.
 * The OpenAI SDK (some 190 modules) is loaded only then, so a process without an LLM does not pay for it.
 */
export async function configuredLlmClient(config: Config, log: Logger): Promise<LlmClient | undefined> {
  if (!config.LLM_BASE_URL) return undefined;
  const { createLlmClient } = await import('./openaiClient.ts');
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
