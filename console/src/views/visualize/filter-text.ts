import { flowFilterCatalog } from '../../../../core/analytics/filter/catalog';
import { FilterError } from '../../../../core/analytics/filter/ast';
import { parseFilterText } from '../../../../core/analytics/filter/parse';
import { tokenize, type Token } from '../../../../core/analytics/filter/tokens';

/**
 * The filter language's pure code (core/analytics/filter/) in the browser:
 * the same tokenizer and parser the API runs, so the filter box names a
 * syntax error's position before anything is asked, the reverse direction
 * swaps dimension names token by token (never inside a quoted value), and
 * completion knows which word the cursor is in.
 */
export const dimensionNames: readonly string[] = Object.keys(flowFilterCatalog.dimensions);
export const isDimension = (name: string) => name in flowFilterCatalog.dimensions;
export const keywords = ['AND', 'OR', 'NOT', 'IN', 'LIKE', 'ILIKE'];

/** The dimension of the other direction: src_ ↔ dst_, in_ ↔ out_ (exporter_… and the rest stay). */
export function reverseDimension(name: string): string {
  const swaps: [string, string][] = [['src_', 'dst_'], ['dst_', 'src_'], ['in_', 'out_'], ['out_', 'in_']];
  for (const [from, to] of swaps) {
    if (name.startsWith(from) && isDimension(to + name.slice(from.length))) return to + name.slice(from.length);
  }
  return name;
}

/** The filter of the reverse traffic: each dimension word swapped, the rest of the text (values, comments, spacing) kept. */
export function reverseFilter(text: string): string {
  let tokens: Token[];
  try {
    tokens = tokenize(text);
  } catch {
    return text;
  }
  let out = '';
  let from = 0;
  for (const token of tokens) {
    if (token.kind !== 'word' || !isDimension(token.text)) continue;
    out += text.slice(from, token.at.offset) + reverseDimension(token.text);
    from = token.at.offset + token.text.length;
  }
  return out + text.slice(from);
}

/** A syntax error of the filter, as the API would name it (line:column, what was expected), or undefined when it parses. */
export function filterProblem(text: string): string | undefined {
  try {
    parseFilterText(text);
  } catch (err) {
    if (err instanceof FilterError) return `At ${err.at.line}:${err.at.column}: expected ${err.expected}, found ${err.found}.`;
    return String(err);
  }
  const unknown = unknownDimension(text);
  return unknown ? `Unknown dimension "${unknown}".` : undefined;
}

function unknownDimension(text: string): string | undefined {
  const tokens = tokenize(text);
  for (let i = 0; i + 1 < tokens.length; i += 1) {
    const t = tokens[i]!;
    const next = tokens[i + 1]!;
    const before = tokens[i - 1];
    const startsTerm = !before || before.kind === '(' || (before.kind === 'word' && ['AND', 'OR', 'NOT'].includes(before.text.toUpperCase()));
    if (t.kind === 'word' && startsTerm && !isDimension(t.text) && !['NOT', '('].includes(t.text.toUpperCase()) && (next.kind === 'op' || next.kind === 'word')) return t.text;
  }
  return undefined;
}

/** What the cursor is completing: a dimension name, or a value of `dimension`; `start` is where the word under the cursor begins. */
export interface CompletionContext {
  kind: 'dimension' | 'value';
  dimension?: string;
  prefix: string;
  start: number;
}

/** The word before the cursor and what it stands for: after `dim op`, or `dim IN (…,`, a value; else a dimension (or keyword). */
export function completionContext(text: string, cursor: number): CompletionContext {
  const head = text.slice(0, cursor);
  const word = /[A-Za-z0-9_.:/'"-]*$/.exec(head)![0];
  const start = cursor - word.length;
  const prefix = word.replace(/^['"]/, '');
  let tokens: Token[];
  try {
    tokens = tokenize(head.slice(0, start));
  } catch {
    return { kind: 'dimension', prefix, start };
  }
  const before = tokens.slice(0, -1);
  const last = before[before.length - 1];
  const dimensionBefore = (i: number) => (before[i]?.kind === 'word' && isDimension(before[i].text) ? before[i].text : undefined);
  if (last?.kind === 'op') {
    const dimension = dimensionBefore(before.length - 2);
    if (dimension) return { kind: 'value', dimension, prefix, start };
  }
  if (last && (last.kind === '(' || last.kind === ',')) {
    // Back to the list's opening parenthesis: `dim IN (` or `dim NOT IN (`.
    let i = before.length - 1;
    while (i >= 0 && before[i]!.kind !== '(') i -= 1;
    if (before[i - 1]?.text.toUpperCase() === 'IN') {
      const dimension = dimensionBefore(i - 2) ?? dimensionBefore(i - 3);
      if (dimension) return { kind: 'value', dimension, prefix, start };
    }
  }
  return { kind: 'dimension', prefix, start };
}

/**
 * The suggestions shown that still start with the text typed (any case;
 * `AS133` fits AS 13335, as the service reads it): what the box offers
 * until the service answers for the new text, so Enter never takes a
 * suggestion for text no longer typed.
 */
export function stillFitting<T extends { value: string }>(shown: T[], prefix: string): T[] {
  const starts = [prefix.toLowerCase(), prefix.toLowerCase().replace(/^as/, '')];
  return shown.filter((item) => starts.some((start) => item.value.toLowerCase().startsWith(start)));
}
