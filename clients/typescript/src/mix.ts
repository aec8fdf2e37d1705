// The check that a client never mixes two servers that can issue the same IDs:
// before it takes a server's IDs of a namespace for the first time, it compares
// that server's info with every other server's that answered.

import { MixError, ServerError } from "./errors.js";
import type { Info, NamespaceInfo, SegmentInfo } from "./info.js";

/**
 * How long the first use of a namespace waits, once the server asked described
 * it, for the other servers' descriptions, so that a mix of two running servers
 * is refused at once rather than after the first server's IDs.
 */
const mixGrace = 200;

/** What the servers said of one namespace. */
export class MixCheck {
  private started = false;
  private readonly answered: boolean[];
  private readonly infos: (NamespaceInfo | null)[];
  private readonly insts: string[];
  private readonly fetching: (Promise<void> | null)[];
  private readonly lastErr: (Error | null)[];
  private err: MixError | null = null;

  /** fetchInfo asks server k for its info of the namespace. */
  constructor(
    private readonly namespace: string,
    private readonly urls: readonly string[],
    private readonly fetchInfo: (k: number) => Promise<Info>,
  ) {
    const n = urls.length;
    this.answered = new Array<boolean>(n).fill(false);
    this.infos = new Array<NamespaceInfo | null>(n).fill(null);
    this.insts = new Array<string>(n).fill("");
    this.fetching = new Array<Promise<void> | null>(n).fill(null);
    this.lastErr = new Array<Error | null>(n).fill(null);
  }

  /**
   * Resolves when server k's IDs may be taken: it described the namespace and
   * agrees with every server that did. Rejects with the MixError of two that
   * collide, or an Error while server k's info does not answer.
   */
  async vet(k: number): Promise<void> {
    if (this.err !== null) {
      throw this.err;
    }
    if (this.answered[k]) {
      return;
    }
    const first = !this.started;
    if (first) {
      this.started = true;
      this.urls.forEach((_, i) => this.fetch(i));
    } else {
      this.fetch(k);
    }
    const all = this.fetching.filter((p): p is Promise<void> => p !== null);
    await this.fetching[k];
    if (first) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.all(all), new Promise<void>((r) => { timer = setTimeout(r, mixGrace); })]);
      clearTimeout(timer);
    }
    if (this.err !== null) {
      throw this.err;
    }
    if (!this.answered[k]) {
      throw new Error(`its info did not answer, so its IDs are not used until it can be compared with the other servers': ${this.lastErr[k]?.message ?? "no answer"}`);
    }
  }

  private fetch(k: number): void {
    if (this.fetching[k] !== null || this.answered[k]) {
      return;
    }
    this.fetching[k] = this.fetchInfo(k).then(
      (info) => {
        const ni = info.namespaces.find((n) => n.name === this.namespace) ?? null;
        if (ni !== null && !described(ni)) {
          this.lastErr[k] = new Error("the server has not read its stores' identities yet");
          return;
        }
        this.insts[k] = info.instance;
        this.admit(k, ni);
      },
      (e: unknown) => {
        if (e instanceof ServerError && ["unimplemented", "not_found", "unauthenticated", "permission_denied"].includes(e.connectCode)) {
          // A server without the info call, or without the namespace for this
          // token: its Next gets the same answer, so nothing of it can be mixed.
          this.admit(k, null);
          return;
        }
        this.lastErr[k] = e instanceof Error ? e : new Error(String(e));
      },
    ).finally(() => {
      this.fetching[k] = null;
    });
  }

  private admit(k: number, ni: NamespaceInfo | null): void {
    this.answered[k] = true;
    this.infos[k] = ni;
    if (this.err !== null) {
      return;
    }
    for (let j = 0; j < this.infos.length; j++) {
      if (j === k || !this.answered[j] || (this.insts[j] !== "" && this.insts[j] === this.insts[k])) {
        continue;
      }
      const why = collide(this.infos[j] ?? null, ni);
      if (why !== "") {
        const [a, b] = [Math.min(j, k), Math.max(j, k)];
        this.err = new MixError(this.namespace, this.urls[a]!, this.urls[b]!, why);
        return;
      }
    }
  }
}

/** Whether a server's info names every store the namespace uses. */
function described(ni: NamespaceInfo): boolean {
  if (ni.lease !== null && ni.lease.leased.length > 0 && ni.lease.identity === null) {
    return false;
  }
  return ni.segment === null || ni.segment.storeIdentities.every((s) => s.identity !== null);
}

/**
 * Why two servers' namespaces can issue the same IDs, or "" when they cannot
 * (or nothing tells: a server that does not say). The rules are the Go client's.
 */
export function collide(a: NamespaceInfo | null, b: NamespaceInfo | null): string {
  if (a === null || b === null) {
    return "";
  }
  const text = (s: string): boolean => s === "uuidv7" || s === "objectid";
  if (text(a.strategy) && text(b.strategy)) {
    return "";
  }
  if (a.strategy !== b.strategy) {
    return `one serves it as ${a.strategy}, the other as ${b.strategy}, and their IDs overlap`;
  }
  if (a.strategy === "segment") {
    return collideSegments(a.segment, b.segment);
  }
  if (a.layout === null || b.layout === null || a.lease === null || b.lease === null) {
    return "";
  }
  if (a.layout.text !== b.layout.text) {
    return `their layouts differ (${a.layout.text} and ${b.layout.text}), so their IDs can collide`;
  }
  const [la, lb] = [a.lease, b.lease];
  if (la.identity === null || lb.identity === null) {
    return "";
  }
  const bn = b.layout.node;
  for (const [k, f] of a.layout.node.entries()) {
    if (k < bn.length && !la.leased.includes(f.name) && !lb.leased.includes(f.name) && f.value !== bn[k]!.value) {
      return ""; // fixed node fields that differ keep the two apart
    }
  }
  if (la.fixedValue && lb.fixedValue && la.value !== lb.value && la.leased.join(",") === lb.leased.join(",")) {
    return ""; // two values fixed by configuration that differ
  }
  const [ia, ib] = [la.identity, lb.identity];
  if (ia.id !== ib.id && ia.private && ib.private) {
    return `each leases its node value from a store only it can use (${ia.id} and ${ib.id}), so both can take the same value`;
  }
  if (ia.id !== ib.id) {
    return `they lease their node values from different stores (${ia.id} and ${ib.id}), so both can take the same value`;
  }
  if (la.scope !== lb.scope) {
    return `they lease from one store but in different scopes (${la.scope} and ${lb.scope}), whose values may be equal`;
  }
  if (la.leased.join(",") !== lb.leased.join(",")) {
    return `they lease different node fields (${la.leased.join(",")} and ${lb.leased.join(",")})`;
  }
  return "";
}

function collideSegments(a: SegmentInfo | null, b: SegmentInfo | null): string {
  if (a === null || b === null || a.storeIdentities.length === 0 || b.storeIdentities.length === 0) {
    return "";
  }
  for (const st of a.storeIdentities) {
    if (st.identity?.private) {
      for (const o of b.storeIdentities) {
        if (o.identity?.id !== st.identity.id) {
          return `each hands out the counters of a store only it can use (${st.identity.id} and ${o.identity?.id ?? ""}), so both hand out 1, 2, 3, ...`;
        }
      }
    }
  }
  if (a.storeIdentities.length !== b.storeIdentities.length) {
    return `they use ${a.storeIdentities.length} and ${b.storeIdentities.length} segment stores, so their residue classes overlap`;
  }
  for (const [k, st] of a.storeIdentities.entries()) {
    const o = b.storeIdentities[k]!;
    if (st.identity?.id !== o.identity?.id || st.residue !== o.residue || st.modulus !== o.modulus) {
      return `residue class ${st.residue} mod ${st.modulus} comes from different stores (${st.identity?.id ?? ""} and ${o.identity?.id ?? ""})`;
    }
  }
  return "";
}
