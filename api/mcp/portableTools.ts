import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { toolAnnotations, type ToolSpec } from './tool.ts';

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
