package io.github.flurryid.flurry.client;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

/** An ID that a server took apart ({@link FlurryClient#decode}). */
public final class Decoded {
    private final String namespace;
    private final String strategy;
    private final String id;
    private final Instant time;
    private final List<Info.NamedValue> fields;
    private final long sequence;

    private Decoded(Map<String, Object> m) {
        namespace = Json.str(m, "namespace");
        strategy = Json.str(m, "strategy");
        id = Json.str(m, "id");
        time = instant(Json.str(m, "time"));
        fields = Info.named(m, "fields");
        sequence = Json.int64(m, "sequence");
    }

    static Decoded of(Map<String, Object> m) {
        return new Decoded(m);
    }

    static Instant instant(String s) {
        if (s.isEmpty()) {
            return null;
        }
        try {
            return OffsetDateTime.parse(s).toInstant();
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    /** The namespace asked for. */
    public String namespace() {
        return namespace;
    }

    /** Its strategy: snowflake, segment, redis, uuidv7 or objectid. */
    public String strategy() {
        return strategy;
    }

    /** The ID as the server writes it: decimal, or the text form of a uuidv7 or objectid ID. */
    public String id() {
        return id;
    }

    /** When the ID was made, to the millisecond; null for segment IDs, which carry no time. */
    public Instant time() {
        return time;
    }

    /** The node fields by name, in layout order (datacenter, worker, ...). */
    public List<Info.NamedValue> fields() {
        return fields;
    }

    /** The sequence field (snowflake, redis), the counter (objectid, segment), or 0 (uuidv7). */
    public long sequence() {
        return sequence;
    }
}
