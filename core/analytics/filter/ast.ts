import { AppError } from '../../errors';

/**
 * The analyst's filter language (docs/analyst-queries.md), as parsed: every
 * node keeps where it starts in the text, so a later check (an unknown
 * dimension, a value of the wrong type) names the place as the parser does.
 */
export interface Position {
  /** Characters from the start of the text, from 0. */
  offset: number;
  /** From 1. */
  line: number;
  /** From 1. */
  column: number;
}

/** A value as written: a number, a quoted string, or a bare word (an address, a prefix, `AS13335`). */
export interface Literal {
  kind: 'number' | 'string' | 'word';
  text: string;
  at: Position;
}

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=' | '<<' | '!<<';

export type FilterNode =
  | { type: 'and' | 'or'; terms: FilterNode[]; at: Position }
  | { type: 'not'; term: FilterNode; at: Position }
  | { type: 'compare'; dimension: string; op: CompareOp; value: Literal; at: Position }
  | { type: 'in'; dimension: string; negated: boolean; values: Literal[]; at: Position }
  | { type: 'like'; dimension: string; negated: boolean; insensitive: boolean; pattern: Literal; at: Position };

/** The text comes from anyone holding a read key: its size and shape are bounded before any work is done on it. */
export const filterLimits = {
  /** Characters of filter text. */
  maxLength: 4096,
  /** Nested parentheses and NOTs. */
  maxDepth: 32,
  /** Conditions (a dimension compared with values). */
  maxTerms: 64,
  /** Values in one IN list. */
  maxListValues: 100,
  /** Values in the whole filter. */
  maxValues: 1000,
} as const;

/** The line and column of offsets in a text (line starts found once, so positioning every token stays linear). */
export function positionsOf(text: string): (offset: number) => Position {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i += 1) if (text[i] === '\n') lineStarts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { offset, line: lo + 1, column: offset - lineStarts[lo]! + 1 };
  };
}

/**
 * A filter that cannot be read or does not fit the dimensions: a 400 whose
 * message and detail name the place (offset, line:column), what was
 * expected there and what was found.
 */
export class FilterError extends AppError {
  constructor(
    readonly at: Position,
    readonly expected: string,
    readonly found: string,
  ) {
    const where = `at ${at.line}:${at.column} (offset ${at.offset})`;
    super('VALIDATION_ERROR', `invalid filter ${where}: expected ${expected}, found ${found}`, {
      details: [{ path: 'filter', message: `${where}: expected ${expected}, found ${found}` }],
    });
    this.name = 'FilterError';
  }
}
