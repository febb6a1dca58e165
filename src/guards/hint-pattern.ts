// One RegExp that finds whether any of many literal hints occurs in a text, case-insensitively,
// shaped as a trie (`s(?:ecret|k(?:-|_live_))|g(?:h…)`): at each position of the text one branch at
// most is followed, so a clean text costs about one comparison per character. A flat alternation of
// the same hints tries every hint at every position (tens of times slower on long results).

const SPECIAL = /[\\^$.*+?()[\]{}|/-]/g;

interface Node {
  end: boolean;
  readonly next: Map<string, Node>;
}

/** The trie-shaped RegExp (flag `i`) matching any of `hints`; undefined when there are none. */
export function hintPattern(hints: readonly string[]): RegExp | undefined {
  const root: Node = { end: false, next: new Map() };
  for (const hint of hints) {
    if (hint === '') continue;
    let node = root;
    for (const char of hint.toLowerCase()) {
      if (node.end) break; // a shorter hint already ends here: a longer one adds nothing
      let child = node.next.get(char);
      if (child === undefined) node.next.set(char, (child = { end: false, next: new Map() }));
      node = child;
    }
    node.end = true;
    node.next.clear();
  }
  if (root.next.size === 0) return undefined;
  return new RegExp(source(root), 'i');
}

function source(node: Node): string {
  const branches = [...node.next].map(([char, child]) => char.replace(SPECIAL, '\\$&') + (child.end ? '' : source(child)));
  return branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
}
