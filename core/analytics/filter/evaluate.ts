import { parseAddressRange } from '../../flow-query';
import type { CheckedFilter, CheckedNode } from './check';

/**
 * The plain meaning of a checked filter over one flow held in memory, with
 * the same semantics the compiled SQL has in ClickHouse: addresses compare
 * as 16 bytes (IPv4 mapped; an absent address is `::`), an absent number is
 * 0 and an absent string '', LIKE's `%` is any run of characters and `_` one
 * character (`\` escapes either), ILIKE folds ASCII letters only. The
 * property test holds the compiler to it.
 */
export type FlowValues = Readonly<Record<string, string | number | null | undefined>>;

/** An address as the eight hex groups that AddressRange bounds are written in. */
function groupsOf(text: string): string {
  return parseAddressRange(text === '' ? '::' : text)?.first ?? '';
}

const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** A LIKE pattern as an anchored regular expression. */
export function likeRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      i += 1;
      source += pattern[i]!.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
    } else if (c === '%') source += '[\\s\\S]*';
    else if (c === '_') source += '[\\s\\S]';
    else source += c.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'u');
}

function holds(node: CheckedNode, flow: FlowValues): boolean {
  switch (node.type) {
    case 'and':
      return node.terms.every((t) => holds(t, flow));
    case 'or':
      return node.terms.some((t) => holds(t, flow));
    case 'not':
      return !holds(node.term, flow);
    case 'within': {
      const g = groupsOf(String(flow[node.dimension] ?? ''));
      return node.ranges.some((r) => g >= r.first && g <= r.last) !== node.negated;
    }
    case 'in': {
      const v = flow[node.dimension] ?? (typeof node.values[0] === 'number' ? 0 : '');
      return (node.values as Array<string | number>).includes(v) !== node.negated;
    }
    case 'order': {
      const v = Number(flow[node.dimension] ?? 0);
      return node.op === '<' ? v < node.value : node.op === '<=' ? v <= node.value : node.op === '>' ? v > node.value : v >= node.value;
    }
    case 'like': {
      const fold = node.insensitive ? asciiLower : (s: string) => s;
      return likeRegExp(fold(node.pattern)).test(fold(String(flow[node.dimension] ?? ''))) !== node.negated;
    }
  }
}

/** Whether a flow passes a filter (every flow passes no filter). */
export function evaluateFilter(filter: CheckedFilter | undefined, flow: FlowValues): boolean {
  return filter === undefined || holds(filter.root, flow);
}
