import fs from 'node:fs';
import path from 'node:path';
import { parseRunArgs, scenarioNames } from '../../bench/run-args';

describe("the bench's command line", () => {
  test('no argument runs every scenario at full size', () => {
    expect(parseRunArgs([])).toEqual({ quick: false, profile: false, write: false });
  });

  test('--only names the scenarios to run', () => {
    expect(parseRunArgs(['--only=flood,e2e', '--profile'])).toEqual({ quick: false, profile: true, write: false, only: ['flood', 'e2e'] });
  });

  test('an unknown flag is refused with its name, not ignored', () => {
    expect(() => parseRunArgs(['--quik'])).toThrow(/unknown argument "--quik"/);
  });

  test('an unknown scenario in --only is refused with its name', () => {
    expect(() => parseRunArgs(['--only=e2e,floods'])).toThrow(/unknown scenario floods in --only/);
  });

  test('an empty --only is refused', () => {
    expect(() => parseRunArgs(['--only='])).toThrow(/names no scenario/);
  });

  test('--help asks for the usage', () => {
    expect(parseRunArgs(['--help'])).toBe('help');
  });

  test('every scenario the bench selects by name is one --only accepts', () => {
    const source = fs.readFileSync(path.join(__dirname, '../../bench/run.ts'), 'utf8');
    const selected = [...source.matchAll(/(?:runs|only\.includes)\('([a-z0-9]+)'\)/g)].map((m) => m[1]);
    expect(selected.length).toBeGreaterThan(10);
    expect([...new Set(selected)].sort()).toEqual([...scenarioNames].sort());
  });
});
