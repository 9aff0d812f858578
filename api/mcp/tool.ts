import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import { guarded, type Guarded } from '../http/guard.ts';
import { refuseUnstorableText } from '../../core/text/storableText.ts';
import type { McpCall, McpContext } from './context.ts';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A tool's answer: the structured result (checked against its outputSchema by the SDK), and the text a model reads. */
interface ToolAnswer<O> {
  data: O;
  text?: string;
}

/** One MCP tool: its contract (zod in and out), what it needs of the caller, and its work. */
export interface ToolSpec<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  /** Access, and the limits `run` may charge (ctx.charge): the call's requestsPerMinute is counted with the first charge, in one statement. */
  access: Guarded;
  /** Reads only: no job queued, nothing stored (quota counters aside). */
  readOnly: boolean;
  /** Deletes what the caller keeps (a client may ask before calling it). */
  destructive?: true;
  run(args: z.output<I>, ctx: McpCall, extra: ToolExtra): Promise<ToolAnswer<z.output<O>>>;
}

export const defineTool = <I extends z.ZodObject, O extends z.ZodObject>(spec: ToolSpec<I, O>) =>
  spec as unknown as ToolSpec<z.ZodObject, z.ZodObject>;

/**
 * A refusal the caller can act on (quota, scope, feature, not found, bad input) is a tool result with
 * isError, so the model reads it; a fault of ours is too, without internals, with the request id.
 */
function toolError(error: unknown, ctx: McpContext): CallToolResult {
  if (error instanceof AppError) {
    return {
      isError: true,
      content: [{ type: 'text', text: `${error.code}: ${error.message}` }],
      _meta: { code: error.code, ...(error.options.details ? { details: error.options.details } : {}) },
    };
  }
  ctx.log.error('mcp tool failed', { reqId: ctx.requestId, err: error, stack: (error as Error)?.stack });
  return {
    isError: true,
    content: [{ type: 'text', text: `INTERNAL_ERROR: an unexpected error occurred; quote request id ${ctx.requestId} when reporting it` }],
  };
}

/** What a client may assume of a tool's calls. */
const toolAnnotations = (spec: ToolSpec<z.ZodObject, z.ZodObject>) => ({
  title: spec.title,
  readOnlyHint: spec.readOnly,
  destructiveHint: spec.destructive ?? false,
  idempotentHint: spec.readOnly,
  openWorldHint: false,
});

/** Registers the tool: its arguments (validated by the SDK) must be storable text, then every call passes the REST API's guard chain (access, then the charge; api/http/guard.ts). */
export function registerTool(server: McpServer, spec: ToolSpec<z.ZodObject, z.ZodObject>, ctx: McpContext): void {
  server.registerTool(
    spec.name,
    {
      title: spec.title,
      description: spec.description,
      inputSchema: spec.input,
      outputSchema: spec.output,
      annotations: toolAnnotations(spec),
    },
    async (args: Record<string, unknown>, extra: ToolExtra): Promise<CallToolResult> => {
      try {
        refuseUnstorableText(args, 'arguments');
        const answer = await guarded(ctx.deps, ctx.caller, spec.access, ({ charge }) => spec.run(args, { ...ctx, charge }, extra), {
          what: `the ${spec.name} tool`,
        });
        return {
          content: [{ type: 'text', text: answer.text ?? JSON.stringify(answer.data, null, 2) }],
          structuredContent: answer.data as Record<string, unknown>,
        };
      } catch (error) {
        return toolError(error, ctx);
      }
    },
  );
}

type JsonSchema = { [keyword: string]: unknown };

/**
 * The schema with every `type` a single name: a list of types (how zod writes a nullable field,
 * `["string", "null"]`) becomes an `anyOf` of single types, which means the same in every JSON Schema
 * draft. Property maps are walked too, so a property named "type" stays a property.
 */
export function singleTypeSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(singleTypeSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const walked: JsonSchema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'properties' && value && typeof value === 'object') {
      walked.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, singleTypeSchema(property)]));
    } else walked[keyword] = singleTypeSchema(value);
  }
  const types = walked.type;
  if (!Array.isArray(types)) return walked;
  delete walked.type;
  if (types.length === 1) return { type: types[0], ...walked };
  const choice = types.map((type) => ({ type }));
  const { anyOf, ...others } = walked;
  // An anyOf already there must hold as well: both go under allOf.
  return anyOf ? { ...others, allOf: [{ anyOf: choice }, { anyOf }] } : { anyOf: choice, ...others };
}

/** A tool as tools/list describes it: the JSON Schemas the SDK would write (draft-07, from the zod schemas), in single types. */
function describeTool(spec: ToolSpec<z.ZodObject, z.ZodObject>): Tool {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: singleTypeSchema(z.toJSONSchema(spec.input, { target: 'draft-7', io: 'input' })) as Tool['inputSchema'],
    outputSchema: singleTypeSchema(z.toJSONSchema(spec.output, { target: 'draft-7', io: 'output' })) as Tool['outputSchema'],
    annotations: toolAnnotations(spec),
  };
}

/**
 * Answers tools/list with schemas that clients with single-type dialects accept (the MCP Inspector
 * warned about each `type: [T, "null"]`: 80 of them). Inputs have no nullable fields (an absent
 * optional field says the same); outputs keep null where a value can be missing, as `anyOf`. Replaces
 * the SDK's own tools/list answer, which has no option for it; calls still go through the SDK.
 */
export function listPortableTools(server: McpServer, tools: ReadonlyArray<ToolSpec<z.ZodObject, z.ZodObject>>): void {
  let described = describedLists.get(tools);
  if (!described) describedLists.set(tools, (described = tools.map(describeTool)));
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: described }));
}

/**
 * tools/list's answer per list of tools, worked out once per process: a server is built for every
 * request (stateless), and converting the tools' 20 zod schemas took about 6 ms of CPU each time.
 */
const describedLists = new WeakMap<ReadonlyArray<ToolSpec<z.ZodObject, z.ZodObject>>, Tool[]>();
