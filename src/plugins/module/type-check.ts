import { dirname, join } from 'node:path';
import { statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CompilerHost, CompilerOptions, SemanticDiagnosticsBuilderProgram, SourceFile } from 'typescript';
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
 * `run --watch` asks this before it swaps a changed module in. The program of each module is
 * kept and built again incrementally (see ModuleTypeCheck): a fresh one parsed the standard
 * library and every package's declarations again, seconds a save.
 */
export async function typeErrors(file: string, mayImport: (file: string) => Promise<boolean> = () => Promise.resolve(true)): Promise<string[] | undefined> {
  let ts: TypeScript;
  let url: string;
  try {
    // Imported on use, as in moduleFile: a worker that checks no module never holds it.
    const { resolve: resolveImport } = await import('import-meta-resolve');
    url = resolveImport('typescript', pathToFileURL(join(dirname(file), 'module.js')).href);
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
  const key = `${url}\u0000${file}`;
  let check = checks.get(key);
  if (!check || !check.sameOptions(parsed.options)) {
    const optionsText = JSON.stringify(parsed.options);
    // The modules of one project share their source files (the standard library, zod's and
    // toolwire's declarations: most of a check's memory), as a language service's registry does.
    const hostKey = `${url}\u0000${optionsText}`;
    let host = hosts.get(hostKey);
    if (!host) hosts.set(hostKey, (host = cachingHost(ts, parsed.options)));
    check = new ModuleTypeCheck(ts, file, parsed.options, optionsText, host);
    checks.set(key, check);
  }
  return check.errors();
}

/** One kept check per module file (and the typescript checking it): a process checks the modules it serves, again on each save. */
const checks = new Map<string, ModuleTypeCheck>();
/** One caching host per typescript and options: what the checks of one project share. */
const hosts = new Map<string, CompilerHost>();

/**
 * A module's type check, kept between saves: the source files are kept by name and read
 * again only when their size or time changed, and each program is built from the last one
 * (a semantic-diagnostics builder program), so a save costs the check of what it touched:
 * about a tenth of a second, against 1.5 to 4 s for a program made anew.
 */
class ModuleTypeCheck {
  private builder: SemanticDiagnosticsBuilderProgram | undefined;

  constructor(
    private readonly ts: TypeScript,
    private readonly file: string,
    private readonly options: CompilerOptions,
    private readonly optionsText: string,
    private readonly host: CompilerHost,
  ) {}

  sameOptions(options: CompilerOptions): boolean {
    return JSON.stringify(options) === this.optionsText;
  }

  errors(): string[] {
    const { ts } = this;
    this.builder = ts.createSemanticDiagnosticsBuilderProgram([this.file], this.options, this.host, this.builder);
    const diagnostics = [
      ...this.builder.getOptionsDiagnostics(),
      ...this.builder.getGlobalDiagnostics(),
      ...this.builder.getSyntacticDiagnostics(),
      ...this.builder.getSemanticDiagnostics(),
    ];
    return diagnostics
      .filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error && !diagnostic.file?.fileName.includes('/node_modules/'))
      .map((diagnostic) => {
        const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
        if (!diagnostic.file || diagnostic.start === undefined) return `TS${diagnostic.code}: ${text}`;
        const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
        return `${diagnostic.file.fileName}:${line + 1}:${character + 1}: TS${diagnostic.code}: ${text}`;
      });
  }
}

/**
 * A compiler host that hands back the same source file while the file is unchanged (by size
 * and modification time), with that as its version: what lets the builder reuse the last
 * program's files and the diagnostics of those a save did not touch.
 */
function cachingHost(ts: TypeScript, options: CompilerOptions): CompilerHost {
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  const kept = new Map<string, { readonly version: string; readonly sourceFile: SourceFile }>();
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreateNewSourceFile) => {
    const version = fileVersion(fileName);
    const seen = kept.get(fileName);
    if (seen && seen.version === version && !shouldCreateNewSourceFile) return seen.sourceFile;
    const sourceFile = read(fileName, languageVersion, onError, shouldCreateNewSourceFile);
    if (sourceFile && version !== undefined) {
      (sourceFile as { version?: string }).version = version;
      kept.set(fileName, { version, sourceFile });
    }
    return sourceFile;
  };
  return host;
}

function fileVersion(fileName: string): string | undefined {
  try {
    const stat = statSync(fileName);
    return `${stat.size}:${stat.mtimeMs}`;
  } catch {
    return undefined;
  }
}
