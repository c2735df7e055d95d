import { filterLimits, FilterError, positionsOf, type CompareOp, type FilterNode, type Literal, type Position } from './ast';
import { describeToken, tokenize, type Token } from './tokens';

/**
 * The filter's grammar, by recursive descent (keywords in any case):
 *
 *   filter    := or
 *   or        := and { OR and }
 *   and       := unary { AND unary }
 *   unary     := NOT unary | '(' or ')' | condition
 *   condition := dimension op value
 *              | dimension [NOT] IN '(' value { ',' value } ')'     (NOTIN too)
 *              | dimension [NOT] LIKE string | [NOT] ILIKE string    (UNLIKE, IUNLIKE too)
 *   op        := = | != | <> | < | <= | > | >= | << | !<<
 *   value     := number | string | word
 *
 * Depth, conditions and values are counted as they are read, so a hostile
 * text stops at its first excess.
 */
/** The language's keywords (any case), as completion offers them. */
export const filterKeywords = ['AND', 'OR', 'NOT', 'IN', 'NOTIN', 'LIKE', 'ILIKE', 'UNLIKE', 'IUNLIKE'] as const;
const keywords = new Set(filterKeywords.map((k) => k.toLowerCase()));
const isKeyword = (t: Token, word: string) => t.kind === 'word' && t.text.toLowerCase() === word;
const isDimensionWord = (t: Token) => t.kind === 'word' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(t.text) && !keywords.has(t.text.toLowerCase());

class Parser {
  private i = 0;
  private depth = 0;
  private terms = 0;
  private values = 0;

  constructor(private readonly tokens: Token[]) {}

  /** The next token (a method, not a getter: the compiler would keep a narrowed kind across take()). */
  private peek(): Token {
    return this.tokens[this.i]!;
  }

  private fail(expected: string, token = this.peek()): never {
    throw new FilterError(token.at, expected, describeToken(token));
  }

  private take(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.i += 1;
    return token;
  }

  private takeKeyword(word: string): boolean {
    if (!isKeyword(this.peek(), word)) return false;
    this.i += 1;
    return true;
  }

  private nested<T>(at: Position, read: () => T): T {
    this.depth += 1;
    if (this.depth > filterLimits.maxDepth) throw new FilterError(at, `at most ${filterLimits.maxDepth} nested parentheses or NOTs`, 'one more');
    const node = read();
    this.depth -= 1;
    return node;
  }

  filter(): FilterNode {
    const node = this.or();
    if (this.peek().kind !== 'end') this.fail(this.peek().kind === ')' ? 'AND, OR or the end of the filter (this ")" closes nothing)' : 'AND, OR or the end of the filter');
    return node;
  }

  private chain(type: 'and' | 'or', read: () => FilterNode): FilterNode {
    const first = read();
    const terms = [first];
    while (this.takeKeyword(type)) terms.push(read());
    return terms.length === 1 ? first : { type, terms, at: first.at };
  }

  private or(): FilterNode {
    return this.chain('or', () => this.and());
  }

  private and(): FilterNode {
    return this.chain('and', () => this.unary());
  }

  private unary(): FilterNode {
    const token = this.peek();
    if (this.takeKeyword('not')) return this.nested<FilterNode>(token.at, () => ({ type: 'not', term: this.unary(), at: token.at }));
    if (token.kind === '(') {
      this.take();
      const inner = this.nested(token.at, () => this.or());
      if (this.peek().kind !== ')') this.fail(`AND, OR or ")" closing the "(" at ${token.at.line}:${token.at.column}`);
      this.take();
      return inner;
    }
    return this.condition();
  }

  private value(): Literal {
    const token = this.peek();
    if (token.kind !== 'string' && !(token.kind === 'word' && !keywords.has(token.text.toLowerCase()))) this.fail('a value (a number, a quoted string, an address or a prefix)');
    this.take();
    this.values += 1;
    if (this.values > filterLimits.maxValues) throw new FilterError(token.at, `at most ${filterLimits.maxValues} values in a filter`, 'one more');
    return { kind: token.kind === 'string' ? 'string' : /^\d+$/.test(token.text) ? 'number' : 'word', text: token.text, at: token.at };
  }

  private list(): Literal[] {
    if (this.peek().kind !== '(') this.fail('"(" opening the list of values');
    const open = this.take();
    const values = [this.value()];
    while (this.peek().kind === ',') {
      this.take();
      if (values.length >= filterLimits.maxListValues) throw new FilterError(this.peek().at, `at most ${filterLimits.maxListValues} values in a list`, 'one more');
      values.push(this.value());
    }
    if (this.peek().kind !== ')') this.fail(`"," or ")" closing the list opened at ${open.at.line}:${open.at.column}`);
    this.take();
    return values;
  }

  private condition(): FilterNode {
    const name = this.peek();
    if (!isDimensionWord(name)) this.fail('a dimension name, NOT or "("');
    this.take();
    this.terms += 1;
    if (this.terms > filterLimits.maxTerms) throw new FilterError(name.at, `at most ${filterLimits.maxTerms} conditions`, 'one more');
    const dimension = name.text.toLowerCase();
    const at = name.at;
    if (this.peek().kind === 'op') return { type: 'compare', dimension, op: this.take().text as CompareOp, value: this.value(), at };
    const negated = this.takeKeyword('not');
    const word = this.peek().kind === 'word' ? this.peek().text.toLowerCase() : '';
    if (word === 'in' || (!negated && word === 'notin')) {
      this.take();
      return { type: 'in', dimension, negated: negated || word === 'notin', values: this.list(), at };
    }
    const like = ['like', 'ilike', ...(negated ? [] : ['unlike', 'iunlike'])];
    if (like.includes(word)) {
      this.take();
      const pattern = this.peek();
      if (pattern.kind !== 'string') this.fail('a quoted pattern');
      this.take();
      const literal: Literal = { kind: 'string', text: pattern.text, at: pattern.at };
      return { type: 'like', dimension, negated: negated || word.includes('unlike'), insensitive: word.startsWith('i'), pattern: literal, at };
    }
    return this.fail(negated ? 'IN, LIKE or ILIKE after NOT' : 'an operator (= != < <= > >= << !<<), IN, NOT IN, LIKE, NOT LIKE or ILIKE');
  }
}

/**
 * A filter text as its syntax tree, or undefined when the text holds no
 * condition (empty, blanks, comments). Throws FilterError naming the place.
 */
export function parseFilterText(text: string): FilterNode | undefined {
  if (text.length > filterLimits.maxLength) {
    throw new FilterError(positionsOf(text)(filterLimits.maxLength), `at most ${filterLimits.maxLength} characters`, `${text.length} characters`);
  }
  const tokens = tokenize(text);
  if (tokens.length === 1) return undefined;
  return new Parser(tokens).filter();
}
