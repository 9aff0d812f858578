import type { Config } from '../config.ts';
import { createLlmClient } from '../llm/openaiClient.ts';
import type { Logger } from '../log.ts';
import { createLlmSummaryGenerator } from './llmSummariser.ts';
import { createExtractiveGenerator } from './offline/createExtractiveGenerator.ts';
import type { SummaryGenerator } from './summary.ts';

/** The LLM behind LLM_BASE_URL (any OpenAI-compatible server) when configured, else the built-in offline generator. */
export function configuredSummaryGenerator(config: Config, log: Logger): SummaryGenerator {
  if (!config.LLM_BASE_URL) return createExtractiveGenerator();
  return createLlmSummaryGenerator(
    createLlmClient({
      baseUrl: config.LLM_BASE_URL,
      ...(config.LLM_API_KEY ? { apiKey: config.LLM_API_KEY } : {}),
      model: config.LLM_MODEL,
      contextTokens: config.LLM_CONTEXT_TOKENS,
      concurrency: config.LLM_CONCURRENCY,
      timeoutMs: config.LLM_TIMEOUT_MS,
      log,
    }),
  );
}
