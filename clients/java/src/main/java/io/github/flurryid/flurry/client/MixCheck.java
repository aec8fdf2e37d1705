package io.github.flurryid.flurry.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * The check that a client never mixes two servers that can issue the same IDs of a
 * namespace: before it takes a server's IDs for the first time, it compares that
 * server's info with every other server's that answered. The rules are the Go
 * client's (client/mix.go), and the TypeScript client's.
 */
final class MixCheck {
    /**
     * How long the first use of a namespace waits, once the server asked described
     * it, for the other servers' descriptions, so that a mix of two running servers
     * is refused at once rather than after the first server's IDs.
     */
    static final long MIX_GRACE_MS = 200;

    private final String namespace;
    private final List<String> urls;
    private final IntFunction<CompletableFuture<Info>> fetchInfo;
    private boolean started;
    private final boolean[] answered;
    private final Info.NamespaceInfo[] infos;
    private final String[] insts;
    private final CompletableFuture<?>[] fetching;
    private final Throwable[] lastErr;
    private MixException err;

    /** fetchInfo asks server k for its info of the namespace. */
    MixCheck(String namespace, List<String> urls, IntFunction<CompletableFuture<Info>> fetchInfo) {
        this.namespace = namespace;
        this.urls = urls;
        this.fetchInfo = fetchInfo;
        int n = urls.size();
        answered = new boolean[n];
        infos = new Info.NamespaceInfo[n];
        insts = new String[n];
        Arrays.fill(insts, "");
        fetching = new CompletableFuture<?>[n];
        lastErr = new Throwable[n];
    }

    /**
     * Completes when server k's IDs may be taken: it described the namespace and
     * agrees with every server that did. Completes exceptionally with the
     * MixException of two that collide, or an IOException while server k's info
     * does not answer.
     */
    CompletableFuture<Void> vet(int k) {
        CompletableFuture<?> mine;
        CompletableFuture<?> all = null;
        synchronized (this) {
            if (err != null) {
                return CompletableFuture.failedFuture(err);
            }
            if (answered[k]) {
                return CompletableFuture.completedFuture(null);
            }
            boolean first = !started;
            if (first) {
                started = true;
                for (int i = 0; i < urls.size(); i++) {
                    fetch(i);
                }
                List<CompletableFuture<?>> fs = new ArrayList<>();
                for (CompletableFuture<?> f : fetching) {
                    if (f != null) {
                        fs.add(f);
                    }
                }
                all = CompletableFuture.allOf(fs.toArray(new CompletableFuture<?>[0]))
                    .completeOnTimeout(null, MIX_GRACE_MS, TimeUnit.MILLISECONDS);
            } else {
                fetch(k);
            }
            mine = fetching[k] == null ? CompletableFuture.completedFuture(null) : fetching[k];
        }
        final CompletableFuture<?> grace = all;
        CompletableFuture<?> wait = grace == null ? mine : mine.thenCompose(v -> grace);
        return wait.handle((v, e) -> {
            synchronized (this) {
                if (err != null) {
                    throw new CompletionException(err);
                }
                if (!answered[k]) {
                    Throwable le = lastErr[k];
                    throw new CompletionException(new java.io.IOException(
                        "its info did not answer, so its IDs are not used until it can be compared with the other servers': "
                            + (le == null ? "no answer" : le.getMessage()), le));
                }
                return null;
            }
        });
    }

    /** Starts asking server k for its info unless that runs or it answered. Holds this. */
    private void fetch(int k) {
        if (fetching[k] != null || answered[k]) {
            return;
        }
        CompletableFuture<Info> f;
        try {
            f = fetchInfo.apply(k);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        fetching[k] = done;
        f.whenComplete((info, e) -> {
            synchronized (this) {
                fetching[k] = null;
                if (e == null) {
                    Info.NamespaceInfo ni = info.namespace(namespace);
                    if (ni != null && !described(ni)) {
                        lastErr[k] = new java.io.IOException("the server has not read its stores' identities yet");
                    } else {
                        insts[k] = info.instance();
                        admit(k, ni);
                    }
                } else {
                    Throwable c = FlurryClient.unwrap(e);
                    if (c instanceof ServerAnswerException && Arrays.asList("unimplemented", "not_found",
                        "unauthenticated", "permission_denied").contains(((ServerAnswerException) c).connectCode())) {
                        // A server without the info call, or without the namespace for this
                        // token: its Next gets the same answer, so nothing of it can be mixed.
                        admit(k, null);
                    } else {
                        lastErr[k] = FlurryClient.described(c);
                    }
                }
            }
            done.complete(null);
        });
    }

    /** Records server k's description and compares it with the others'. Holds this. */
    private void admit(int k, Info.NamespaceInfo ni) {
        answered[k] = true;
        infos[k] = ni;
        if (err != null) {
            return;
        }
        for (int j = 0; j < infos.length; j++) {
            if (j == k || !answered[j] || (!insts[j].isEmpty() && insts[j].equals(insts[k]))) {
                continue;
            }
            String why = collide(infos[j], ni);
            if (!why.isEmpty()) {
                err = new MixException(namespace, urls.get(Math.min(j, k)), urls.get(Math.max(j, k)), why);
                return;
            }
        }
    }

    /** Whether a server's info names every store the namespace uses. */
    private static boolean described(Info.NamespaceInfo ni) {
        if (ni.lease() != null && !ni.lease().leased().isEmpty() && ni.lease().identity() == null) {
            return false;
        }
        if (ni.segment() != null) {
            for (Info.SegmentStore s : ni.segment().storeIdentities()) {
                if (s.identity() == null) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean text(String s) {
        return s.equals("uuidv7") || s.equals("objectid");
    }

    /**
     * Why two servers' namespaces can issue the same IDs, or "" when they cannot
     * (or nothing tells: a server that does not say).
     */
    static String collide(Info.NamespaceInfo a, Info.NamespaceInfo b) {
        if (a == null || b == null) {
            return "";
        }
        if (text(a.strategy()) && text(b.strategy())) {
            return "";
        }
        if (!a.strategy().equals(b.strategy())) {
            return "one serves it as " + a.strategy() + ", the other as " + b.strategy() + ", and their IDs overlap";
        }
        if (a.strategy().equals("segment")) {
            return collideSegments(a.segment(), b.segment());
        }
        if (a.layout() == null || b.layout() == null || a.lease() == null || b.lease() == null) {
            return "";
        }
        if (!a.layout().text().equals(b.layout().text())) {
            return "their layouts differ (" + a.layout().text() + " and " + b.layout().text() + "), so their IDs can collide";
        }
        Info.LeaseInfo la = a.lease();
        Info.LeaseInfo lb = b.lease();
        if (la.identity() == null || lb.identity() == null) {
            return "";
        }
        List<Info.NamedValue> an = a.layout().node();
        List<Info.NamedValue> bn = b.layout().node();
        for (int k = 0; k < an.size() && k < bn.size(); k++) {
            Info.NamedValue f = an.get(k);
            if (!la.leased().contains(f.name()) && !lb.leased().contains(f.name()) && f.value() != bn.get(k).value()) {
                return ""; // fixed node fields that differ keep the two apart
            }
        }
        String leasedA = String.join(",", la.leased());
        String leasedB = String.join(",", lb.leased());
        if (la.fixedValue() && lb.fixedValue() && la.value() != lb.value() && leasedA.equals(leasedB)) {
            return ""; // two values fixed by configuration that differ
        }
        Info.StoreIdentity ia = la.identity();
        Info.StoreIdentity ib = lb.identity();
        if (!ia.id().equals(ib.id()) && ia.isPrivate() && ib.isPrivate()) {
            return "each leases its node value from a store only it can use (" + ia.id() + " and " + ib.id()
                + "), so both can take the same value";
        }
        if (!ia.id().equals(ib.id())) {
            return "they lease their node values from different stores (" + ia.id() + " and " + ib.id()
                + "), so both can take the same value";
        }
        if (!la.scope().equals(lb.scope())) {
            return "they lease from one store but in different scopes (" + la.scope() + " and " + lb.scope()
                + "), whose values may be equal";
        }
        if (!leasedA.equals(leasedB)) {
            return "they lease different node fields (" + leasedA + " and " + leasedB + ")";
        }
        return "";
    }

    private static String idOf(Info.StoreIdentity s) {
        return s == null ? "" : s.id();
    }

    private static String collideSegments(Info.SegmentInfo a, Info.SegmentInfo b) {
        if (a == null || b == null || a.storeIdentities().isEmpty() || b.storeIdentities().isEmpty()) {
            return "";
        }
        for (Info.SegmentStore st : a.storeIdentities()) {
            if (st.identity() != null && st.identity().isPrivate()) {
                for (Info.SegmentStore o : b.storeIdentities()) {
                    if (!idOf(o.identity()).equals(st.identity().id())) {
                        return "each hands out the counters of a store only it can use (" + st.identity().id() + " and "
                            + idOf(o.identity()) + "), so both hand out 1, 2, 3, ...";
                    }
                }
            }
        }
        if (a.storeIdentities().size() != b.storeIdentities().size()) {
            return "they use " + a.storeIdentities().size() + " and " + b.storeIdentities().size()
                + " segment stores, so their residue classes overlap";
        }
        for (int k = 0; k < a.storeIdentities().size(); k++) {
            Info.SegmentStore st = a.storeIdentities().get(k);
            Info.SegmentStore o = b.storeIdentities().get(k);
            if (!idOf(st.identity()).equals(idOf(o.identity())) || st.residue() != o.residue() || st.modulus() != o.modulus()) {
                return "residue class " + st.residue() + " mod " + st.modulus() + " comes from different stores ("
                    + idOf(st.identity()) + " and " + idOf(o.identity()) + ")";
            }
        }
        return "";
    }
}
