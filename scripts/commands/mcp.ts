/**
 * `afterimage mcp --url http://host:8080 --key tsk_…`: a stdio bridge for desktop assistants that
 * start MCP servers as child processes. JSON-RPC messages are passed through unchanged between stdin/
 * stdout and the service's /mcp (Streamable HTTP), so the tools, resources, prompts, progress and
 * errors are exactly the service's. stdout carries only protocol messages; diagnostics go to stderr.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { parseOptions, UsageError } from '../cli.ts';

const USAGE = `usage: npx afterimage mcp --url http://host:8080 --key tsk_…
a stdio MCP bridge to the service's /mcp, for desktop assistants that start MCP servers as processes
(or AFTERIMAGE_URL and AFTERIMAGE_API_KEY in the environment)`;

export async function mcpCommand(args: string[]): Promise<void> {
  let settings: { endpoint: URL; key: string };
  try {
    settings = bridgeSettings(args);
  } catch (error) {
    // The assistant shows only what comes back on stdout ("Connection closed" when the process just ends).
    if (error instanceof UsageError) await refuseFirstRequest(`afterimage: ${error.message}`);
    throw error;
  }
  const { endpoint, key } = settings;

  const remote = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const local = new StdioServerTransport();
  const warn = (message: string) => process.stderr.write(`afterimage mcp: ${message}\n`);

  local.onmessage = (message) => {
    remote.send(message).catch((error: Error) => {
      const failure = describeFailure(error, endpoint);
      warn(failure);
      // A request the service could not take still gets an answer, so the assistant does not wait forever.
      if ('id' in message && 'method' in message)
        void local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: `afterimage: ${failure}` } });
    });
  };
  remote.onmessage = (message) => void local.send(message);
  remote.onerror = (error) => warn(describeFailure(error, endpoint));
  local.onclose = () => void remote.close();

  await remote.start();
  await local.start();
  await new Promise<void>((resolve) => {
    const previous = local.onclose;
    local.onclose = () => {
      previous?.();
      resolve();
    };
    process.stdin.once('end', () => resolve());
  });
}

/** The service's /mcp and the key, from the options or the environment; a UsageError names what is missing and where to set it. */
function bridgeSettings(args: string[]): { endpoint: URL; key: string } {
  const { values } = parseOptions(args, { url: { type: 'string' }, key: { type: 'string' } }, { usage: USAGE });
  const base = values.url ?? process.env.AFTERIMAGE_URL;
  const key = values.key ?? process.env.AFTERIMAGE_API_KEY;
  const where = "in the assistant's configuration of this MCP server";
  if (!base) throw new UsageError(`mcp: give the service address with --url http://host:8080 (or AFTERIMAGE_URL) ${where}`);
  if (!key) throw new UsageError(`mcp: give an API key with --key tsk_… (or AFTERIMAGE_API_KEY) ${where}`);
  try {
    return { endpoint: new URL(base.replace(/\/+$/, '').replace(/\/mcp$/, '') + '/mcp'), key };
  } catch {
    throw new UsageError(`mcp: --url ${base} is not a URL; expected e.g. http://127.0.0.1:8080`);
  }
}

/** How long a bridge that cannot start waits for the client's first request to answer it. */
const FIRST_REQUEST_WAIT_MS = 10_000;

/**
 * Answers the client's first request (initialize) with a JSON-RPC error carrying `message`, so the
 * assistant shows why the bridge cannot start; then the command fails. Nothing to wait for on a terminal.
 */
async function refuseFirstRequest(message: string): Promise<void> {
  if (process.stdin.isTTY) return;
  const local = new StdioServerTransport();
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, FIRST_REQUEST_WAIT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    local.onmessage = (request) => {
      if (!('id' in request && 'method' in request)) return;
      void local.send({ jsonrpc: '2.0', id: request.id, error: { code: -32603, message } }).then(done);
    };
    process.stdin.once('end', done);
    void local.start();
  });
  await local.close();
}

/** What to do next for each way of not reaching the service (fetch says only "fetch failed"; the cause names it). */
const NEXT_STEP: Record<string, string> = {
  ECONNREFUSED: 'nothing listens there: start the service (npm start, or npx afterimage start) or give its address with --url',
  ENOTFOUND: 'no such host: check the host name in --url',
  EAI_AGAIN: 'the host name could not be resolved now: check the network and --url',
  ETIMEDOUT: 'no answer: check that the address in --url is reachable from here (firewall, VPN)',
  UND_ERR_CONNECT_TIMEOUT: 'no answer: check that the address in --url is reachable from here (firewall, VPN)',
  ECONNRESET: 'the connection was cut: check that --url is the service and not another server or proxy',
};

/** A failure to reach /mcp named by its address and cause (ECONNREFUSED, ENOTFOUND, …), with what to do. */
function describeFailure(error: Error, endpoint: URL): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (!cause) return `${endpoint.href}: ${error.message}`;
  const code = cause.code ?? cause.message ?? 'unknown cause';
  return `cannot reach ${endpoint.href} (${code}): ${NEXT_STEP[code] ?? 'check --url and the network'}`;
}
