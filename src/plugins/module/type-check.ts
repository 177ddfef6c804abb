import { dirname, join } from 'node:path';
import { realpath } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isPlainObject } from '../../plain-object.js';

type TypeScript = typeof import('typescript');

/** What a project gets when its tsconfig.json says nothing: ES modules, strict; `toolwire init` writes the same. */
export const PROJECT_COMPILER_OPTIONS = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  noEmit: true,
  allowImportingTsExtensions: true,
  skipLibCheck: true,
};

/**
 * The type errors of a TypeScript module and the project files it imports, each as
 * `file:line:column: TSnnnn: message`, checked with the `typescript` the module's own project
 * has installed (none, or one `mayImport` refuses: nothing is checked, and undefined says so). tsx only strips types, so
 * `run --watch` asks this before it swaps a changed module in.
 */
export async function typeErrors(file: string, mayImport: (file: string) => Promise<boolean> = () => Promise.resolve(true)): Promise<string[] | undefined> {
  let ts: TypeScript;
  try {
    // Imported on use, as in moduleFile: a worker that checks no module never holds it.
    const { resolve: resolveImport } = await import('import-meta-resolve');
    const url = resolveImport('typescript', pathToFileURL(join(dirname(file), 'module.js')).href);
    // Importing it runs its code: a typescript the module roots do not hold is not imported.
    if (!(await mayImport(await realpath(fileURLToPath(url))))) return undefined;
    ts = ((await import(url)) as { default: TypeScript }).default;
  } catch {
    return undefined;
  }
  const configFile = ts.findConfigFile(dirname(file), (fileName) => ts.sys.fileExists(fileName));
  const config: unknown = configFile ? ts.readConfigFile(configFile, (fileName) => ts.sys.readFile(fileName)).config : {};
  const json = isPlainObject(config) ? config : {};
  const parsed = ts.parseJsonConfigFileContent(
    { ...json, compilerOptions: { ...PROJECT_COMPILER_OPTIONS, ...(json as { compilerOptions?: object }).compilerOptions, noEmit: true } },
    ts.sys,
    configFile ? dirname(configFile) : dirname(file),
  );
  const program = ts.createProgram([file], parsed.options);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error && !diagnostic.file?.fileName.includes('/node_modules/'))
    .map((diagnostic) => {
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
      if (!diagnostic.file || diagnostic.start === undefined) return `TS${diagnostic.code}: ${text}`;
      const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      return `${diagnostic.file.fileName}:${line + 1}:${character + 1}: TS${diagnostic.code}: ${text}`;
    });
}
