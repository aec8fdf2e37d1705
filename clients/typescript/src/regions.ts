// Servers by region: the local region's servers first, another region's only
// when every local one has failed (docs/multi-region.md).

import { OptionsError } from "./errors.js";
import { normalizeServer } from "./servers.js";

/** One remote region's servers (ClientOptions.remote). */
export interface RemoteRegion {
  /** Names the region in stats, such as "us-east". */
  readonly name: string;
  /** The region's server URLs, as ClientOptions.servers. At least one. */
  readonly servers: readonly string[];
}

/** One server of the client's list, with its region. */
export interface RegionServer {
  readonly url: string;
  /** 0: the local region (servers); k: remote[k-1]. */
  readonly tier: number;
  /** The remote region's name; "" for the local region. */
  readonly region: string;
}

/**
 * Lists the local servers, then each remote region's, normalized, refusing a
 * server listed twice (in any region) and a remote region without servers.
 */
export function regionServers(local: readonly string[], remote: readonly RemoteRegion[] | undefined): RegionServer[] {
  if (remote !== undefined && !Array.isArray(remote)) {
    throw new OptionsError("remote must be a list of regions, each {name, servers}");
  }
  const tiers: { name: string; servers: readonly string[] }[] = [{ name: "", servers: local }, ...(remote ?? [])];
  const out: RegionServer[] = [];
  const seen = new Set<string>();
  tiers.forEach((r, tier) => {
    if (tier > 0 && (r === null || typeof r !== "object" || !Array.isArray(r.servers) || r.servers.length === 0)) {
      throw new OptionsError(`remote region ${tier} (${JSON.stringify(r?.name)}) has no server; give each region at least one`);
    }
    for (const s of r.servers) {
      const url = normalizeServer(String(s));
      if (seen.has(url)) {
        throw new OptionsError(`server ${url} is listed twice`);
      }
      seen.add(url);
      out.push({ url, tier, region: tier === 0 ? "" : String(r.name ?? "") });
    }
  });
  return out;
}

/**
 * The servers' indexes in failover order: those in use, region by region (the
 * local one first), in each starting from the last that answered; then those
 * passed over, local ones first, soonest back first. A call never gives up
 * without asking each server once.
 */
export function regionOrder(
  servers: readonly { readonly tier: number; isDown(now: number): boolean; readonly downUntil: number }[],
  last: number,
  now: number,
): number[] {
  const n = servers.length;
  const tiers = n === 0 ? 0 : Math.max(...servers.map((s) => s.tier)) + 1;
  const out: number[] = [];
  const later: number[] = [];
  for (let tier = 0; tier < tiers; tier++) {
    for (let k = 0; k < n; k++) {
      const i = (last + k) % n;
      const s = servers[i]!;
      if (s.tier !== tier) {
        continue;
      }
      (s.isDown(now) ? later : out).push(i);
    }
  }
  later.sort((a, b) => servers[a]!.tier - servers[b]!.tier || servers[a]!.downUntil - servers[b]!.downUntil);
  return out.concat(later);
}
