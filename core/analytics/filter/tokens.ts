import { FilterError, positionsOf, type Position } from './ast';

/**
 * The filter's tokens, read by hand in one pass (no regular expression runs
 * over the whole text, so hostile text costs its length). A word is a run of
 * letters, digits and `_ . : /`: a dimension, a keyword, a number, an
 * address or prefix (`10.0.0.0/8`, `2001:db8::/32`), `AS13335`. Strings are
 * quoted with ' or " and take backslash escapes. Comments run from `--` to
 * the end of the line, or between `/*` and `*\/`.
 */
export type TokenKind = 'word' | 'string' | 'op' | '(' | ')' | ',' | 'end';

export interface Token {
  kind: TokenKind;
  /** The word, the operator, or the string's value (unquoted, unescaped). */
  text: string;
  at: Position;
}

const wordChar = /[A-Za-z0-9_.:/]/;
const operators = ['!<<', '<<', '<=', '>=', '!=', '<>', '=', '<', '>'];

/** What a token looks like in an error message. */
export function describeToken(token: Token): string {
  if (token.kind === 'end') return 'the end of the filter';
  if (token.kind === 'string') return `the string ${JSON.stringify(token.text)}`;
  return JSON.stringify(token.text);
}

class Scanner {
  private i = 0;
  readonly tokens: Token[] = [];
  private readonly positionAt: (offset: number) => Position;

  constructor(private readonly text: string) {
    this.positionAt = positionsOf(text);
  }

  private at(offset = this.i): Position {
    return this.positionAt(offset);
  }

  private skipComment(): boolean {
    const { text } = this;
    if (text.startsWith('--', this.i)) {
      const end = text.indexOf('\n', this.i);
      this.i = end < 0 ? text.length : end + 1;
      return true;
    }
    if (text.startsWith('/*', this.i)) {
      const end = text.indexOf('*/', this.i + 2);
      if (end < 0) throw new FilterError(this.at(text.length), '"*/" closing the comment opened at ' + `${this.at().line}:${this.at().column}`, 'the end of the filter');
      this.i = end + 2;
      return true;
    }
    return false;
  }

  private readString(): void {
    const { text } = this;
    const start = this.i;
    const quote = text[start]!;
    let value = '';
    this.i += 1;
    while (this.i < text.length && text[this.i] !== quote) {
      if (text[this.i] === '\\' && this.i + 1 < text.length) this.i += 1;
      value += text[this.i];
      this.i += 1;
    }
    if (this.i >= text.length) throw new FilterError(this.at(text.length), `${quote} closing the string opened at ${this.at(start).line}:${this.at(start).column}`, 'the end of the filter');
    this.i += 1;
    this.tokens.push({ kind: 'string', text: value, at: this.at(start) });
  }

  private readOne(): void {
    const { text } = this;
    const c = text[this.i]!;
    if (c === "'" || c === '"') return this.readString();
    if (c === '(' || c === ')' || c === ',') {
      this.tokens.push({ kind: c, text: c, at: this.at() });
      this.i += 1;
      return;
    }
    const op = operators.find((o) => text.startsWith(o, this.i));
    if (op !== undefined) {
      this.tokens.push({ kind: 'op', text: op === '<>' ? '!=' : op, at: this.at() });
      this.i += op.length;
      return;
    }
    if (!wordChar.test(c)) throw new FilterError(this.at(), 'a dimension, a value, an operator or a parenthesis', JSON.stringify(c));
    const start = this.i;
    while (this.i < text.length && wordChar.test(text[this.i]!)) this.i += 1;
    this.tokens.push({ kind: 'word', text: text.slice(start, this.i), at: this.at(start) });
  }

  run(): Token[] {
    const { text } = this;
    while (this.i < text.length) {
      if (/\s/.test(text[this.i]!)) this.i += 1;
      else if (!this.skipComment()) this.readOne();
    }
    this.tokens.push({ kind: 'end', text: '', at: this.at(text.length) });
    return this.tokens;
  }
}

/** The tokens of a filter text, ending with an `end` token. */
export function tokenize(text: string): Token[] {
  return new Scanner(text).run();
}
