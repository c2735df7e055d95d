/** The scenarios `--only=` may name (BENCHMARKS.md's method names what each measures). */
export const scenarioNames = [
  'sync', 'rawjs', 'rawch', 'engine', 'enrichment', 'e2e', 'recovery', 'single', 'incident', 'query', 'replay', 'collector', 'bytes', 'top', 'automation', 'flood', 'cluster',
] as const;

export const usage = `usage: npm run bench [-- --quick] [--profile] [--write] [--only=<scenario>,...]
  --quick    the smoke run: smaller sizes, no automation, flood or cluster scenario
  --profile  CPU profiles of the service's processes, summarized in the result
  --write    rewrite BENCHMARKS.md's table after a quick run too (a full run always does)
  --only=    run only the named scenarios (never writes BENCHMARKS.md): ${scenarioNames.join(', ')}`;

export interface RunArgs {
  quick: boolean;
  profile: boolean;
  write: boolean;
  /** The scenarios to run; every one when absent. */
  only?: string[];
}

/**
 * The bench's command line. An unknown flag or scenario is refused rather
 * than ignored: an unknown flag (`--help`, a misspelt `--only=`) ran every scenario, half an hour.
 */
export function parseRunArgs(argv: readonly string[]): RunArgs | 'help' {
  const parsed: RunArgs = { quick: false, profile: false, write: false };
  for (const arg of argv) {
    if (arg === '--help' || arg === '-h') return 'help';
    else if (arg === '--quick') parsed.quick = true;
    else if (arg === '--profile') parsed.profile = true;
    else if (arg === '--write') parsed.write = true;
    else if (arg.startsWith('--only=')) parsed.only = onlyOf(arg.slice('--only='.length));
    else throw new Error(`unknown argument ${JSON.stringify(arg)}\n${usage}`);
  }
  return parsed;
}

function onlyOf(list: string): string[] {
  const names = list.split(',').filter((name) => name !== '');
  const unknown = names.filter((name) => !(scenarioNames as readonly string[]).includes(name));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')} in --only\n${usage}`);
  if (!names.length) throw new Error(`--only names no scenario\n${usage}`);
  return names;
}
