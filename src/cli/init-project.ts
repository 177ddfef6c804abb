import { z } from 'zod';
import { typedToolDescriptors } from '../plugins/module/module-descriptors.js';
import { defineTool } from '../plugins/module/module-tool.js';
import { PROJECT_COMPILER_OPTIONS } from '../plugins/module/type-check.js';

/**
 * The tool `toolwire init` writes, as toolwire reads it: its descriptors are derived from
 * this twin of GREET_SOURCE (name, description; the arguments are "from-module"), and the
 * project's own `toolwire validate` (run by the newcomer's test) fails if the two ever drift
 * apart.
 */
const greet = defineTool({
  name: 'greet',
  description: 'Greets someone by name, in one of a few languages',
  arguments: z.object({
    name: z.string().min(1).describe('Who to greet'),
    language: z.enum(['en', 'fr', 'de']).default('en').describe('The language of the greeting'),
  }),
  run: () => '',
});

const GREET_SOURCE = `import { defineTool, z } from 'toolwire';

/** A first tool. Edit it while \`npm start\` runs: the worker picks the change up. */
export const greet = defineTool({
  name: 'greet',
  description: 'Greets someone by name, in one of a few languages',
  arguments: z.object({
    name: z.string().min(1).describe('Who to greet'),
    language: z.enum(['en', 'fr', 'de']).default('en').describe('The language of the greeting'),
  }),
  run({ name, language }) {
    const hello = { en: 'Hello', fr: 'Bonjour', de: 'Hallo' }[language];
    return \`\${hello}, \${name}!\`;
  },
});
`;

const GREET_TEST = `import { describe, expect, it } from 'vitest';
import { runTool } from 'toolwire';
import { greet } from '../tools/greet.ts';

describe('greet', () => {
  it('greets in the language asked for, English by default', async () => {
    expect(await runTool(greet, { name: 'Ada' })).toBe('Hello, Ada!');
    expect(await runTool(greet, { name: 'Ada', language: 'fr' })).toBe('Bonjour, Ada!');
  });

  it('tells the model what to fix when the arguments are wrong', async () => {
    await expect(runTool(greet, { name: '' })).rejects.toThrow(/name: Too small/);
  });
});
`;

const TSCONFIG = {
  // The options the type check before a --watch swap assumes, so the project and the worker agree.
  compilerOptions: PROJECT_COMPILER_OPTIONS,
  include: ['tools', 'test'],
};

function readme(name: string, service: string, toolwire: string): string {
  return `# ${name}

Tools for AI agents, served by toolwire, which \`npm install\` takes from \`${toolwire}\`: where
the \`toolwire init\` that made this project came from (package.json's \`toolwire\` dependency;
point it elsewhere there).

\`\`\`sh
npm install
npm start                                          # the worker, reloading tools/ on save
npx toolwire call greet --args '{"name":"Ada"}'    # in another terminal
npm test
\`\`\`

- \`tools/greet.ts\` is the tool: its zod schema is what the model sees and what each call
  is checked against. Add tools there (a module may export several).
- \`config/\` holds its descriptors (service \`${service}\`). Their arguments are
  \`"from-module"\`: the worker reads the zod schema, so a schema edit is served on save like
  any other. A new tool needs its descriptor: \`npm run descriptors\` writes them all again.
  For a shared config store (TrustGraph's), whose agents read the arguments from the
  descriptors, write them out: \`npx toolwire module import tools/greet.ts --service ${service}\`.
- \`npm start\` type checks a changed tool before it swaps it in: a type or syntax error is
  logged with its line, and the last good code keeps serving.
- \`npm start\` runs embedded; with \`PULSAR_URL\` set it serves on the broker. The gateway's
  \`http://127.0.0.1:8787/docs\` lists the tools and lets you try them.
`;
}

/** Every file of a new tool project, by path. */
export function projectFiles(project: {
  readonly name: string;
  readonly service: string;
  readonly toolwire: string;
  readonly vitest: string;
  readonly typescript: string;
}): Record<string, string> {
  const service = {
    id: project.service,
    'request-queue': `non-persistent://tg/request/${project.service}`,
    'response-queue': `non-persistent://tg/response/${project.service}`,
    'config-params': [{ name: 'tool', required: true }],
    plugin: { kind: 'module', module: '../tools/greet.ts' },
  };
  const pkg = {
    name: project.name,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: {
      start: 'toolwire run --watch --config-dir config',
      test: 'vitest run',
      descriptors: `toolwire module import tools/greet.ts --service ${project.service} --from-module --out config`,
    },
    dependencies: { toolwire: project.toolwire },
    devDependencies: { typescript: project.typescript, vitest: project.vitest },
  };
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const files: Record<string, string> = {
    'package.json': json(pkg),
    'tsconfig.json': json(TSCONFIG),
    '.gitignore': 'node_modules/\n',
    'README.md': readme(project.name, project.service, project.toolwire),
    'tools/greet.ts': GREET_SOURCE,
    'test/greet.test.ts': GREET_TEST,
    [`config/tool-service/${project.service}.json`]: json(service),
  };
  for (const d of typedToolDescriptors([greet], { service: project.service, prefix: '', argumentsFromModule: true }))
    files[`config/tool/${String(d['name'])}.json`] = json(d);
  return files;
}
