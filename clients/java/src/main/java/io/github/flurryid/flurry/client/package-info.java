/**
 * The Java client of flurry servers: {@link io.github.flurryid.flurry.client.FlurryClient}
 * hands out unique, time-ordered 64-bit IDs from a buffer per namespace, refilled
 * ahead of need, with failover and hedging between servers;
 * {@link io.github.flurryid.flurry.client.Layout} takes IDs apart without a server.
 * JDK 11 or later, no other dependency.
 */
package io.github.flurryid.flurry.client;
