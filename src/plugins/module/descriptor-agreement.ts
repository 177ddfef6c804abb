import type { Tool } from '../../catalog/descriptors.js';
import { parameterSchema, type Parameter } from '../../arguments/parameter.js';
import { typedToolArguments, type TypedTool } from './typed-tool.js';

/**
 * Where a tool descriptor's arguments disagree with the schema of the typed tool it calls:
 * an argument one has and the other lacks, or a different type, requiredness or set of
 * options. Each problem says how to put it right. Hidden (non-llm) parameters are the
 * operator's and are not compared.
 */
export function descriptorDisagreements(tool: TypedTool, descriptor: Tool): string[] {
  const derived = new Map(typedToolArguments(tool).map((argument) => [String(argument['name']), parameterSchema.parse(argument)]));
  const declared = new Map(descriptor.parameters.filter((parameter) => parameter.form === 'llm').map((parameter) => [parameter.name, parameter]));
  const fix = `(regenerate the descriptors: toolwire module import)`;
  const problems: string[] = [];
  for (const [name, want] of derived) {
    const have = declared.get(name);
    if (!have) {
      problems.push(`"${name}" is in ${tool.name}'s schema but not in the descriptor ${fix}`);
      continue;
    }
    if (have.type !== want.type) problems.push(`"${name}" is ${want.type} in ${tool.name}'s schema but ${have.type} in the descriptor ${fix}`);
    else if (!sameOptions(have, want))
      problems.push(
        `"${name}" takes ${(want.options ?? []).join('|')} in ${tool.name}'s schema but ${(have.options ?? []).join('|')} in the descriptor ${fix}`,
      );
    if (have.required !== want.required)
      problems.push(
        `"${name}" is ${want.required ? 'required' : 'optional'} in ${tool.name}'s schema but ${have.required ? 'required' : 'optional'} in the descriptor ${fix}`,
      );
  }
  for (const name of declared.keys()) {
    if (!derived.has(name)) problems.push(`"${name}" is in the descriptor but not in ${tool.name}'s schema ${fix}`);
  }
  return problems;
}

function sameOptions(left: Parameter, right: Parameter): boolean {
  return JSON.stringify(left.options ?? []) === JSON.stringify(right.options ?? []);
}
