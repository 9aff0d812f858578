import type { z } from 'zod';

/**
 * Tokens a call used, as the server counted them (0 when it does not say). Declared here, not
 * imported from core/summaries (whose tokenUsage schema has the same shape): summaries use this
 * layer, so an import back would be a folder cycle.
 */
export interface TokenUsage {
  prompt: number;
  completion: number;
}

/** One structured request to a chat model: the answer must satisfy `schema`. */
export interface JsonRequest<S extends z.ZodType> {
  system: string;
  user: string;
  schema: S;
  /** Names the JSON schema in the request (letters, digits, _ and -). */
  schemaName: string;
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

/**
 * A chat model behind an OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio),
 * asked for JSON that a zod schema checks. Shared by summaries and stenograms.
 */
export interface LlmClient {
  /** The model name, recorded as llmModel with every result. */
  readonly model: string;
  /** The model's context window in tokens (LLM_CONTEXT_TOKENS): what a prompt and its answer must fit in. */
  readonly contextTokens: number;
  completeJson<S extends z.ZodType>(request: JsonRequest<S>): Promise<{ value: z.output<S>; usage: TokenUsage }>;
}
