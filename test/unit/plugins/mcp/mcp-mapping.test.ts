/**
 * What mcp-mapping.property.test.ts found, kept as examples: an MCP input schema's properties
 * as argument declarations, and the arguments the server then gets.
 */
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { argumentsOf } from '../../../../src/plugins/mcp/mcp-descriptors.js';
import { parameterSchema } from '../../../../src/arguments/parameter.js';
import { prepareArguments } from '../../../../src/arguments/prepare-arguments.js';
import { toolInputSchema } from '../../../../src/arguments/json-schema.js';

function prepared(properties: Record<string, unknown>, args: Record<string, unknown>): Record<string, unknown> {
  const declared = argumentsOf({ name: 't', inputSchema: { type: 'object', properties } } as McpTool).map((a) => parameterSchema.parse(a));
  return prepareArguments(declared, {}, args);
}

describe('MCP argument mapping', () => {
  it('passes a property without a type on as the model sent it, not as its text', () => {
    // Found: an untyped property became a string argument, so 0 reached the server as "0" and {a:1} as '{"a":1}'.
    expect(prepared({ v: {}, w: { description: 'anything' } }, { v: 0, w: { a: [1, false] } })).toEqual({ v: 0, w: { a: [1, false] } });
  });

  it('keeps a numeric enum a number, and shows the model its values', () => {
    // Found: every enum became a select of text options, so 2 reached the server as "2" and failed its schema.
    expect(prepared({ level: { type: 'integer', enum: [1, 2, 3] } }, { level: 2 })).toEqual({ level: 2 });
    expect(prepared({ level: { type: 'integer', enum: [1, 2, 3] } }, { level: '2' })).toEqual({ level: 2 });
    expect(prepared({ mixed: { enum: [0, 'auto'] } }, { mixed: 0 })).toEqual({ mixed: 0 });
    const declared = argumentsOf({ name: 't', inputSchema: { type: 'object', properties: { level: { type: 'integer', enum: [1, 2, 3] } } } }).map((a) =>
      parameterSchema.parse(a),
    );
    expect(toolInputSchema(declared).properties['level']).toMatchObject({ type: 'integer', enum: [1, 2, 3] });
    expect(prepared({ colour: { type: 'string', enum: ['red', 'blue'] } }, { colour: 'red' })).toEqual({ colour: 'red' });
  });
});
