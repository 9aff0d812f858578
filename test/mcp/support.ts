import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** An MCP client over real HTTP to an API's /mcp, with the key as a Bearer token. */
export async function connectMcp(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'afterimage-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
  return client;
}

/** The text of a tool result's first content item. */
export const textOf = (result: object) => ((result as { content?: Array<{ text?: string }> }).content ?? [])[0]?.text ?? '';

/** The text of a resource read's first content. */
export const contentText = (result: { contents: object[] }) => String((result.contents[0] as { text?: string }).text ?? '');
