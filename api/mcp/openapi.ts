/**
 * /mcp in the OpenAPI document: its HTTP surface (methods, statuses, media types, the JSON-RPC 2.0
 * envelope). What the messages mean is the MCP specification's (tools/list, tools/call, …), which
 * an OpenAPI schema cannot express; api/REFERENCE.md lists the tools, resources and prompts.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const jsonRpcId = { type: ['string', 'integer', 'null'] };

export const mcpSchemas = {
  JsonRpcMessage: {
    type: 'object',
    description: 'A JSON-RPC 2.0 request (method and id), notification (method, no id) or response (result or error, and id).',
    required: ['jsonrpc'],
    properties: {
      jsonrpc: { const: '2.0' },
      id: jsonRpcId,
      method: { type: 'string' },
      params: { type: 'object' },
      result: { type: 'object' },
      error: { $ref: '#/components/schemas/JsonRpcError/properties/error' },
    },
  },
  JsonRpcError: {
    type: 'object',
    description: 'A JSON-RPC 2.0 error outside any request (id null): how /mcp refuses at the HTTP level.',
    required: ['jsonrpc', 'error', 'id'],
    properties: {
      jsonrpc: { const: '2.0' },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
      },
      id: { type: 'null' },
    },
  },
};

const messages = {
  oneOf: [
    { $ref: '#/components/schemas/JsonRpcMessage' },
    { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/JsonRpcMessage' } },
  ],
};
const refusal = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/JsonRpcError' } } },
});
const security = [{ ApiKeyHeader: [] }, { BearerAuth: [] }];
const unauthorized = refusal('no API key, or an unknown or revoked one (JSON-RPC error -32001)', {
  'WWW-Authenticate': {
    description:
      'Bearer realm="afterimage", resource_metadata="…/.well-known/oauth-protected-resource/mcp" (RFC 6750, RFC 9728; the metadata names no authorization server: keys are issued out of band), plus error="invalid_token" for a bad key',
    schema: { type: 'string' },
  },
});
const forbidden = refusal('an Origin that is not allowed (DNS rebinding protection), or a tier without API access');
const inEnvelope = { $ref: '#/components/schemas/Error' };
/** What every operation may answer, in the REST API's error envelope (or, when the key lookup reports it, as a JSON-RPC error). */
const failures = {
  500: { description: 'an unexpected failure', content: { 'application/json': { schema: inEnvelope } } },
  503: {
    description: 'the database is unavailable; retry after Retry-After seconds',
    content: { 'application/json': { schema: { oneOf: [inEnvelope, { $ref: '#/components/schemas/JsonRpcError' }] } } },
  },
};

/** Without sessions, GET (a standalone stream) and DELETE (ending a session) have nothing to do. */
const notSupported = (method: string) => ({
  operationId: `${method}Mcp`,
  summary: `Not supported: the MCP server is stateless; POST JSON-RPC messages`,
  description: `${method === 'get' ? 'A standalone event stream for messages the server starts' : 'Ending a session'} needs sessions, which this server does not keep: every request stands alone. Answers 405 with Allow: POST once the key is checked.`,
  tags: ['AI assistants (MCP)'],
  security,
  responses: {
    401: unauthorized,
    403: forbidden,
    405: refusal('always, after authentication', { Allow: { description: 'POST', schema: { type: 'string' } } }),
    ...failures,
  },
});

export const mcpPathItem = {
  post: {
    operationId: 'postMcp',
    summary:
      'The MCP server for AI assistants (Streamable HTTP transport, stateless): the same data, quotas and access rules as the REST API',
    description:
      "Send one JSON-RPC message or a batch, with Content-Type: application/json and Accept: application/json, text/event-stream. Requests are answered with JSON, or with an event stream (each `message` event one JSON-RPC message) when a request asks for progress (params._meta.progressToken). Notifications and responses alone are accepted with 202. The methods, tools, resources and prompts are the MCP specification's and api/REFERENCE.md's. Tool calls count the same quotas as the REST endpoints they stand for; a refused one is a tool result with isError, not an HTTP error.",
    tags: ['AI assistants (MCP)'],
    security,
    parameters: [
      {
        name: 'MCP-Protocol-Version',
        in: 'header',
        required: false,
        description: `The protocol version agreed at initialisation (${LATEST_PROTOCOL_VERSION} and earlier versions the SDK supports)`,
        schema: { type: 'string' },
      },
    ],
    requestBody: { required: true, content: { 'application/json': { schema: messages } } },
    responses: {
      200: {
        description: 'The answers to the requests sent',
        content: {
          'application/json': { schema: messages },
          'text/event-stream': { schema: { type: 'string', description: 'Server-sent events: progress notifications, then the answers' } },
        },
      },
      202: { description: 'Accepted: the body held only notifications or responses' },
      400: refusal('a body that is not JSON or not JSON-RPC, a batch too large, an unsupported MCP-Protocol-Version'),
      401: unauthorized,
      403: forbidden,
      406: refusal('an Accept header without both application/json and text/event-stream'),
      413: refusal('a body over the size limit'),
      415: refusal('a body that is not application/json'),
      ...failures,
    },
  },
  get: notSupported('get'),
  delete: notSupported('delete'),
};
