import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../core/config.ts';

describe('LLM settings', () => {
  it('default to no endpoint, gpt-4o-mini, an 8k context, 2 calls at once and 2 minutes', () => {
    const config = loadConfig({});
    expect(config.LLM_BASE_URL).toBeUndefined();
    expect(config).toMatchObject({ LLM_MODEL: 'gpt-4o-mini', LLM_CONTEXT_TOKENS: 8192, LLM_CONCURRENCY: 2, LLM_TIMEOUT_MS: 120_000 });
  });

  it('mask the API key in the described configuration', () => {
    const config = loadConfig({
      LLM_BASE_URL: 'http://localhost:11434/v1',
      LLM_API_KEY: 'sk-very-secret',
      LLM_MODEL: 'llama3.1:8b',
      LLM_CONTEXT_TOKENS: '32768',
    });
    const described = describeConfig(config);
    expect(described.LLM_API_KEY).toBe('****');
    expect(JSON.stringify(described)).not.toContain('sk-very-secret');
    expect(described).toMatchObject({ LLM_BASE_URL: 'http://localhost:11434/v1', LLM_MODEL: 'llama3.1:8b', LLM_CONTEXT_TOKENS: 32768 });
  });

  it('refuse a context too small to summarise in and a base URL that is not one', () => {
    expect(() => loadConfig({ LLM_CONTEXT_TOKENS: '1024' })).toThrow(ConfigError);
    expect(() => loadConfig({ LLM_BASE_URL: 'localhost 11434' })).toThrow(/LLM_BASE_URL/);
  });
});
