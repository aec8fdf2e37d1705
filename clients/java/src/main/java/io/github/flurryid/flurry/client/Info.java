package io.github.flurryid.flurry.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A server and the namespaces the caller may see ({@link FlurryClient#info}), read
 * from the Protobuf JSON mapping of InfoResponse (zero values left out). The
 * client's own check that it never mixes servers that can issue the same IDs reads
 * the same.
 */
public final class Info {
    private final String version;
    private final String instance;
    private final List<NamespaceInfo> namespaces;

    private Info(String version, String instance, List<NamespaceInfo> namespaces) {
        this.version = version;
        this.instance = instance;
        this.namespaces = Collections.unmodifiableList(namespaces);
    }

    /** The server's version. */
    public String version() {
        return version;
    }

    /** Random, made at each start of the server: two addresses of one server answer the same. */
    public String instance() {
        return instance;
    }

    /** The namespaces, in the order of the server's configuration. */
    public List<NamespaceInfo> namespaces() {
        return namespaces;
    }

    /** The namespace of that name, or null. */
    public NamespaceInfo namespace(String name) {
        for (NamespaceInfo n : namespaces) {
            if (n.name.equals(name)) {
                return n;
            }
        }
        return null;
    }

    /** A name and a value: a node field of a layout or of a decoded ID. */
    public static final class NamedValue {
        private final String name;
        private final long value;

        NamedValue(String name, long value) {
            this.name = name;
            this.value = value;
        }

        /** The field's name (datacenter, worker, ...). */
        public String name() {
            return name;
        }

        /** Its value. */
        public long value() {
            return value;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof NamedValue && ((NamedValue) o).name.equals(name) && ((NamedValue) o).value == value;
        }

        @Override
        public int hashCode() {
            return name.hashCode() * 31 + Long.hashCode(value);
        }

        @Override
        public String toString() {
            return name + "=" + value;
        }
    }

    /** One namespace of a server. */
    public static final class NamespaceInfo {
        private final String name;
        private final String strategy;
        private final boolean ready;
        private final String notReadyReason;
        private final long issued;
        private final boolean tokenRequired;
        private final LayoutInfo layout;
        private final LeaseInfo lease;
        private final SegmentInfo segment;
        private final List<String> warnings;

        NamespaceInfo(Map<String, Object> o) {
            name = Json.str(o, "name");
            strategy = Json.str(o, "strategy");
            ready = Json.bool(o, "ready");
            notReadyReason = Json.str(o, "notReadyReason");
            issued = Json.int64(o, "issued");
            tokenRequired = Json.bool(o, "tokenRequired");
            Map<String, Object> l = Json.obj(o.get("layout"));
            layout = l == null ? null : new LayoutInfo(l);
            Map<String, Object> ls = Json.obj(o.get("lease"));
            lease = ls == null ? null : new LeaseInfo(ls);
            Map<String, Object> sg = Json.obj(o.get("segment"));
            segment = sg == null ? null : new SegmentInfo(sg);
            warnings = Collections.unmodifiableList(Json.strings(o, "warnings"));
        }

        /** The namespace's name. */
        public String name() {
            return name;
        }

        /** snowflake, segment, redis, uuidv7 or objectid. */
        public String strategy() {
            return strategy;
        }

        /** Whether the namespace can issue now. */
        public boolean ready() {
            return ready;
        }

        /** Why not, in one line, when not ready. */
        public String notReadyReason() {
            return notReadyReason;
        }

        /** IDs issued since the server started. */
        public long issued() {
            return issued;
        }

        /** Whether a token is needed. */
        public boolean tokenRequired() {
            return tokenRequired;
        }

        /** The layout of a snowflake or redis namespace's IDs; null for others. */
        public LayoutInfo layout() {
            return layout;
        }

        /** The lease of a snowflake namespace's node value; null for others. */
        public LeaseInfo lease() {
            return lease;
        }

        /** The buffers of a segment namespace; null for others. */
        public SegmentInfo segment() {
            return segment;
        }

        /** What an operator should know, such as a store that only this server can use. */
        public List<String> warnings() {
            return warnings;
        }
    }

    /** The layout of a namespace's IDs. */
    public static final class LayoutInfo {
        private final String text;
        private final String preset;
        private final List<NamedValue> node;

        LayoutInfo(Map<String, Object> l) {
            text = Json.str(l, "text");
            preset = Json.str(l, "preset");
            node = named(l, "node");
        }

        /** The text form, which {@link Layout#parse} reads. */
        public String text() {
            return text;
        }

        /** The preset's name if it is one, else "". */
        public String preset() {
            return preset;
        }

        /** The node value the namespace issues with, by field. */
        public List<NamedValue> node() {
            return node;
        }
    }

    /** Names the data a lease or segment store keeps. */
    public static final class StoreIdentity {
        private final String id;
        private final boolean isPrivate;

        StoreIdentity(Map<String, Object> o) {
            id = Json.str(o, "id");
            isPrivate = Json.bool(o, "private");
        }

        /** Equal for two servers that use one store, different for two stores. */
        public String id() {
            return id;
        }

        /** Only this server can use the store (the embedded file store in its data directory). */
        public boolean isPrivate() {
            return isPrivate;
        }
    }

    /** The lease a snowflake namespace takes its node value from. */
    public static final class LeaseInfo {
        private final String store;
        private final String scope;
        private final long value;
        private final String state;
        private final StoreIdentity identity;
        private final List<String> leased;
        private final boolean fixedValue;

        LeaseInfo(Map<String, Object> o) {
            store = Json.str(o, "store");
            scope = Json.str(o, "scope");
            value = Json.int64(o, "value");
            state = Json.str(o, "state");
            Map<String, Object> id = Json.obj(o.get("identity"));
            identity = id == null ? null : new StoreIdentity(id);
            leased = Collections.unmodifiableList(Json.strings(o, "leased"));
            fixedValue = Json.bool(o, "fixedValue");
        }

        /** The store's URL, password redacted. */
        public String store() {
            return store;
        }

        /** The scope of the lease within the store. */
        public String scope() {
            return scope;
        }

        /** The leased value. */
        public long value() {
            return value;
        }

        /** held, lost, acquiring or static. */
        public String state() {
            return state;
        }

        /** The lease store's identity; null while it does not answer, or from a server before identities. */
        public StoreIdentity identity() {
            return identity;
        }

        /** The layout's node fields the leased value fills; the others are fixed by configuration. */
        public List<String> leased() {
            return leased;
        }

        /** The leased value is fixed by configuration (lease.fixed). */
        public boolean fixedValue() {
            return fixedValue;
        }
    }

    /** One segment store of a namespace: it hands out residue class residue mod modulus. */
    public static final class SegmentStore {
        private final StoreIdentity identity;
        private final long residue;
        private final long modulus;

        SegmentStore(Map<String, Object> o) {
            Map<String, Object> id = Json.obj(o.get("identity"));
            identity = id == null ? null : new StoreIdentity(id);
            residue = Json.int64(o, "residue");
            modulus = Json.int64(o, "modulus");
        }

        /** Null while the store does not answer. */
        public StoreIdentity identity() {
            return identity;
        }

        /** The residue class it hands out. */
        public long residue() {
            return residue;
        }

        /** The modulus of the residue classes. */
        public long modulus() {
            return modulus;
        }
    }

    /** The buffers of a segment namespace. */
    public static final class SegmentInfo {
        private final List<String> stores;
        private final List<SegmentStore> storeIdentities;

        SegmentInfo(Map<String, Object> o) {
            stores = Collections.unmodifiableList(Json.strings(o, "stores"));
            List<SegmentStore> ids = new ArrayList<>();
            for (Object x : Json.list(o, "storeIdentities")) {
                Map<String, Object> st = Json.obj(x);
                ids.add(new SegmentStore(st == null ? Collections.emptyMap() : st));
            }
            storeIdentities = Collections.unmodifiableList(ids);
        }

        /** The stores' URLs, passwords redacted. */
        public List<String> stores() {
            return stores;
        }

        /** The stores in the order of stores, with their identities and residue classes. */
        public List<SegmentStore> storeIdentities() {
            return storeIdentities;
        }
    }

    static List<NamedValue> named(Map<String, Object> m, String k) {
        List<NamedValue> out = new ArrayList<>();
        for (Object f : Json.list(m, k)) {
            Map<String, Object> o = Json.obj(f);
            if (o != null) {
                out.add(new NamedValue(Json.str(o, "name"), Json.int64(o, "value")));
            }
        }
        return Collections.unmodifiableList(out);
    }

    /** Maps an InfoResponse. */
    static Info of(Map<String, Object> m) {
        List<NamespaceInfo> ns = new ArrayList<>();
        for (Object n : Json.list(m, "namespaces")) {
            Map<String, Object> o = Json.obj(n);
            ns.add(new NamespaceInfo(o == null ? Collections.emptyMap() : o));
        }
        return new Info(Json.str(m, "version"), Json.str(m, "instance"), ns);
    }
}
