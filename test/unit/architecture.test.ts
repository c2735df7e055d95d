import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The layering docs/internals/layout.md describes, held by the code itself: which
 * folder may import which, no import cycle, small files and short functions.
 */
const root = path.resolve(__dirname, '../..');

/** What each product folder may import of the project, besides itself. */
const allowed: Record<string, readonly string[]> = {
  observability: [],
  core: [],
  workflows: ['core'],
  storage: ['core', 'observability'],
  streams: ['core', 'observability'],
  temporal: ['core', 'observability'],
  engines: ['core', 'observability'],
  application: ['core', 'observability', 'storage', 'streams', 'temporal', 'workflows'],
  // engines: the collector keeps GoFlow2 running with the engines' one supervisor.
  workers: ['application', 'core', 'engines', 'observability', 'storage', 'streams', 'temporal', 'workflows'],
  api: ['application', 'core', 'observability', 'storage', 'streams', 'temporal', 'workflows'],
  service: ['api', 'application', 'core', 'engines', 'observability', 'storage', 'streams', 'temporal', 'workers', 'workflows'],
};
const productFolders = Object.keys(allowed);
/** The consume machinery under both the telemetry lanes and the webhook outbox (workers/consume/). */
const sharedWorkerFolder = 'consume';
const otherFolders = ['bench', 'test'];

/** Packages workflow code may import: the workflow SDK only (plus core and its own folder). */
const workflowPackages = ['@temporalio/workflow'];

function sourceFiles(folder: string): string[] {
  const dir = path.join(root, folder);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f));
}

const files = [...productFolders, ...otherFolders].flatMap(sourceFiles);
const folderOf = (file: string) => path.relative(root, file).split(path.sep)[0]!;

function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  return [`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f));
}

const imports = new Map<string, { project: string[]; packages: string[] }>();
for (const file of files) {
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  const project: string[] = [];
  const packages: string[] = [];
  for (const { fileName } of info.importedFiles) {
    const resolved = resolveImport(file, fileName);
    if (resolved) project.push(resolved);
    else if (!fileName.startsWith('.')) packages.push(fileName);
  }
  imports.set(file, { project, packages });
}
const rel = (file: string) => path.relative(root, file);

function cycles(): string[][] {
  // Tarjan's strongly connected components over the file graph.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of imports.get(v)?.project ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(rel(w));
      } while (w !== v);
      if (component.length > 1) found.push(component);
    }
  };
  for (const file of files) if (!indexOf.has(file)) visit(file);
  return found;
}

function functionsOver(maxLines: number, file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const long: string[] = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      // A test file's describe() callback is the file's outline, not a function.
      const call = node.parent && ts.isCallExpression(node.parent) ? node.parent.expression.getText(source) : '';
      const lines = lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
      if (lines > maxLines && !/^describe(\.each\(.*\))?$/.test(call)) {
        long.push(`${rel(file)}:${lineOf(node.getStart(source)) + 1} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return long;
}

describe('the code keeps its architecture', () => {
  test('no file imports another in a cycle', () => {
    expect(cycles()).toEqual([]);
  });

  test('each product folder imports only the folders below it in the layering', () => {
    const violations: string[] = [];
    for (const [file, { project }] of imports) {
      const from = folderOf(file);
      if (!allowed[from]) continue;
      for (const target of project) {
        const to = folderOf(target);
        if (to !== from && !allowed[from].includes(to)) violations.push(`${rel(file)} -> ${rel(target)}`);
      }
    }
    expect(violations).toEqual([]);
  });

  test("workers' subsystems do not import one another: only the shared consume folder is theirs in common", () => {
    const subsystemOf = (file: string) => {
      const [top, sub, ...rest] = rel(file).split(path.sep);
      return top === 'workers' && rest.length > 0 ? sub : undefined;
    };
    const violations: string[] = [];
    for (const [file, { project }] of imports) {
      const from = subsystemOf(file);
      if (!from) continue;
      for (const target of project) {
        const to = subsystemOf(target);
        if (to && to !== from && to !== sharedWorkerFolder) violations.push(`${rel(file)} -> ${rel(target)}`);
      }
    }
    expect(violations).toEqual([]);
  });

  test('workflow code imports only the workflow SDK, core and its own folder', () => {
    const violations: string[] = [];
    for (const [file, { packages }] of imports) {
      if (folderOf(file) !== 'workflows') continue;
      for (const pkg of packages) if (!workflowPackages.includes(pkg)) violations.push(`${rel(file)} -> ${pkg}`);
    }
    expect(violations).toEqual([]);
  });

  test('no source file is longer than 300 lines', () => {
    const long = files
      .map((f) => ({ f, lines: fs.readFileSync(f, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 300)
      .map(({ f, lines }) => `${rel(f)} (${lines} lines)`);
    expect(long).toEqual([]);
  });

  test('one doubling back-off: no product code doubles a wait outside core/backoff.ts', () => {
    const doubling = /Math\.min\([^\n]*\*\s*2\b|\*=\s*2\b|\*\s*2\s*\*\*\s*(attempt|failures|failed|deliveries|doublings)/;
    const product = files.filter((f) => (productFolders as readonly string[]).includes(folderOf(f)));
    const others = product.filter((f) => rel(f) !== 'core/backoff.ts' && doubling.test(fs.readFileSync(f, 'utf8'))).map(rel);
    expect(others).toEqual([]);
  });

  test('configuration is read once: no product code but service/config.ts reads process.env', () => {
    const product = files.filter((f) => (productFolders as readonly string[]).includes(folderOf(f)));
    const readers = product.filter((f) => rel(f) !== path.join('service', 'config.ts') && /\bprocess\.env\b/.test(fs.readFileSync(f, 'utf8'))).map(rel);
    expect(readers).toEqual([]);
  });

  test('every setting is declared beside its component, in a *.config.ts file, and nowhere else', () => {
    const product = files.filter((f) => (productFolders as readonly string[]).includes(folderOf(f)));
    const declaring = product.filter((f) => /\bdefineSettings\(/.test(fs.readFileSync(f, 'utf8')) && rel(f) !== path.join('core', 'settings.ts'));
    expect(declaring.filter((f) => !f.endsWith('.config.ts')).map(rel)).toEqual([]);
  });

  test('no function is longer than 60 lines', () => {
    expect(files.flatMap((f) => functionsOver(60, f))).toEqual([]);
  });
});
