import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { VERSION } from '../../version.js';
import { UsageError } from '../args.js';
import { defineCommand, type Command } from '../command.js';
import { projectFiles } from '../init-project.js';
import { ownPackageRoot, toolwireDependency } from '../toolwire-dependency.js';

const HELP = `Usage: toolwire init [DIR] [options]

Makes a new tool project in DIR (default: here; it must be empty or new): one typed tool
(tools/greet.ts), its descriptors (config/), a vitest test for it and a README. Then:

  npm install && npm start          the worker, reloading the tool on save
  npx toolwire call greet --args '{"name":"Ada"}'
  npm test

      --service ID      the tool-service id (default: DIR's name)
      --toolwire SPEC   the toolwire dependency as npm takes it: a version range, or
                        file:PATH for a checkout or a packed tarball. Default: where this
                        toolwire came from: file: its checkout, the tarball (or directory)
                        its project installed it from, ^${VERSION} when that was a registry,
                        else file: its installed directory
`;

/** An npm package name and a service id from a directory name: lower case, [a-z0-9-]. */
function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'tools'
  );
}

export const initCommand: Command = defineCommand({
  name: 'init',
  summary: 'a new tool project: one typed tool, its descriptors, a test',
  help: HELP,
  flags: { service: { type: 'string' }, toolwire: { type: 'string' } },
  async run(io, { values, positionals }) {
    if (positionals.length > 1) throw new UsageError('give at most one DIR');
    const dir = resolve(positionals[0] ?? '.');
    const present = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    if (present.length > 0) throw new UsageError(`${dir} is not empty; give a new or empty directory`);
    const name = slug(basename(dir));
    const service = values.service ?? name;
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(service)) throw new UsageError(`--service ${JSON.stringify(service)}: use letters, digits, . _ and -`);
    const root = values.toolwire === undefined ? await ownPackageRoot() : undefined;
    const toolwire = values.toolwire ?? (root !== undefined ? await toolwireDependency(root, VERSION) : `^${VERSION}`);
    const files = projectFiles({ name, service, toolwire, vitest: '^4.1.0', typescript: '~5.9.3' });
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    io.stdout.write(
      `A tool project in ${dir} (toolwire from ${toolwire}):\n  cd ${dir}\n  npm install\n  npm start\n  npx toolwire call greet --args '{"name":"Ada"}'\n  npm test\n`,
    );
    return 0;
  },
});
