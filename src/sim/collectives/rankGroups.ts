/**
 * The groups of ranks a program's collectives run over, interned by content: two arrays holding the same ranks in
 * the same order are one group, with one canonical array and one dense id, whichever array a caller built. Caches
 * downstream (collective plans, the service's choices, traffic rows) key on the canonical array or the id, so they
 * never depend on a caller reusing one array per group. Remembering the arrays already seen only makes the common
 * case (a compiler reusing its arrays) cheap; it changes no answer.
 */
export class RankGroups<G extends ArrayLike<number> & object = readonly number[]> {
  private readonly seen = new WeakMap<G, G>();
  private readonly byContent = new Map<string, G>();
  private readonly ids = new Map<G, number>();
  private readonly seenLists = new WeakMap<readonly G[], readonly G[]>();
  private readonly listsByContent = new Map<string, readonly G[]>();

  /** Groups interned so far; ids run from 0 to size − 1. */
  get size(): number {
    return this.ids.size;
  }

  /** The canonical array of the group `ranks` holds (the first array seen with that content). */
  canonical(ranks: G): G {
    let c = this.seen.get(ranks);
    if (c) return c;
    const key = Array.prototype.join.call(ranks, ',');
    c = this.byContent.get(key);
    if (!c) {
      c = ranks;
      this.byContent.set(key, c);
      this.ids.set(c, this.ids.size);
    }
    this.seen.set(ranks, c);
    return c;
  }

  /** Dense id of a group, by content. */
  idOf(ranks: G): number {
    return this.ids.get(this.canonical(ranks)) as number;
  }

  /** The canonical list of canonical groups for a list of groups (shadow groups), by content. */
  canonicalList(groups: readonly G[]): readonly G[] {
    let c = this.seenLists.get(groups);
    if (c) return c;
    const members = groups.map((g) => this.canonical(g));
    const key = members.map((g) => this.ids.get(g)).join(',');
    c = this.listsByContent.get(key);
    if (!c) {
      c = members.every((g, i) => g === groups[i]) ? groups : members;
      this.listsByContent.set(key, c);
    }
    this.seenLists.set(groups, c);
    return c;
  }
}
