package io.github.flurryid.flurry.client;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A bit layout of flurry's integer IDs: a time field of {@link #unitMillis()} ticks
 * since {@link #epoch()}, node fields, and a sequence field, most significant
 * first, in at most 63 bits (so every ID is a positive {@code long}). Get one with
 * {@link #parse} (a preset's name or the text form a server reports), or from a
 * server with {@link FlurryClient#layout}; it takes IDs apart without asking a
 * server. Immutable.
 */
public final class Layout {
    /** What a field of a layout holds. */
    public enum Kind {
        /** The time field: ticks since the epoch. */
        TIME,
        /** A node field (datacenter, worker, ...). */
        NODE,
        /** The sequence within a tick. */
        SEQ
    }

    /** One field of a layout. */
    public static final class Field {
        private final String name;
        private final Kind kind;
        private final int bits;
        private final int shift;

        Field(String name, Kind kind, int bits, int shift) {
            this.name = name;
            this.kind = kind;
            this.bits = bits;
            this.shift = shift;
        }

        /** "time", "seq", or the node field's name. */
        public String name() {
            return name;
        }

        /** What it holds. */
        public Kind kind() {
            return kind;
        }

        /** Its width in bits. */
        public int bits() {
            return bits;
        }

        /** The position of its lowest bit in the ID. */
        public int shift() {
            return shift;
        }

        long of(long id) {
            return (id >>> shift) & ((1L << bits) - 1);
        }
    }

    /** An ID taken apart by a layout. */
    public static final class Parts {
        private final long id;
        private final Instant time;
        private final long tick;
        private final List<Info.NamedValue> fields;
        private final long sequence;

        Parts(long id, Instant time, long tick, List<Info.NamedValue> fields, long sequence) {
            this.id = id;
            this.time = time;
            this.tick = tick;
            this.fields = fields;
            this.sequence = sequence;
        }

        /** The ID. */
        public long id() {
            return id;
        }

        /** The start of the tick the ID was made in, to the millisecond. */
        public Instant time() {
            return time;
        }

        /** The time field's value: ticks of the layout's unit since its epoch. */
        public long tick() {
            return tick;
        }

        /** The node fields, most significant first. */
        public List<Info.NamedValue> fields() {
            return fields;
        }

        /** The sequence field. */
        public long sequence() {
            return sequence;
        }
    }

    private static final int MAX_NODE_FIELDS = 8;
    private static final Set<String> RESERVED = new HashSet<>(Arrays.asList("time", "seq", "sequence", "id", "tick"));
    private static final long TWITTER_EPOCH = 1288834974657L; // 2010-11-04T01:42:54.657Z
    private static final Map<String, Object[]> PRESETS = new TreeMap<>();

    static {
        preset("twitter", 1, TWITTER_EPOCH, "time", 41, "datacenter", 5, "worker", 5, "seq", 12);
        preset("leaf", 1, TWITTER_EPOCH, "time", 41, "worker", 10, "seq", 12);
        preset("sonyflake", 10, Instant.parse("2014-09-01T00:00:00Z").toEpochMilli(), "time", 39, "seq", 8, "machine", 16);
        preset("baidu", 1000, Instant.parse("2016-05-20T00:00:00Z").toEpochMilli() - 8 * 3600 * 1000L, "time", 28, "worker", 22, "seq", 13);
        preset("instagram", 1, 1314220021721L, "time", 40, "shard", 13, "seq", 10);
        preset("discord", 1, 1420070400000L, "time", 41, "worker", 5, "process", 5, "seq", 12);
        preset("mastodon", 1, 0, "time", 47, "seq", 16);
        preset("gameserver", 1, 1541001600000L, "time", 38, "platform", 3, "area", 11, "app", 5, "seq", 6);
        preset("jssafe", 100, Instant.parse("2025-01-01T00:00:00Z").toEpochMilli(), "time", 34, "worker", 6, "seq", 13);
    }

    private static void preset(String name, long unit, long epoch, Object... fields) {
        PRESETS.put(name, new Object[] {unit, epoch, fields});
    }

    private final String name;
    private final long unitMillis;
    private final long epochMillis;
    private final List<Field> fields;
    private final int bits;
    private final Field time;
    private final Field seq;
    private final List<Field> nodes;

    private Layout(String name, long unitMillis, long epochMillis, List<String> names, List<Kind> kinds, List<Integer> widths) {
        this.name = name;
        this.unitMillis = unitMillis;
        this.epochMillis = epochMillis;
        int total = 0;
        for (int w : widths) {
            total += w;
        }
        bits = total;
        int shift = total;
        List<Field> fs = new ArrayList<>();
        List<Field> ns = new ArrayList<>();
        Field t = null;
        Field s = null;
        for (int k = 0; k < names.size(); k++) {
            shift -= widths.get(k);
            Field f = new Field(names.get(k), kinds.get(k), widths.get(k), shift);
            fs.add(f);
            if (f.kind == Kind.TIME) {
                t = f;
            } else if (f.kind == Kind.SEQ) {
                s = f;
            } else {
                ns.add(f);
            }
        }
        fields = Collections.unmodifiableList(fs);
        nodes = Collections.unmodifiableList(ns);
        time = t;
        seq = s;
    }

    /** The names of flurry's presets, sorted. */
    public static List<String> presetNames() {
        return Collections.unmodifiableList(new ArrayList<>(PRESETS.keySet()));
    }

    /**
     * Returns the preset of that name (case-insensitive: twitter, leaf, sonyflake,
     * baidu, instagram, discord, mastodon, gameserver, jssafe), or reads the text
     * form flurry writes and reads, e.g.
     * {@code time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16}: the time field
     * first as time:&lt;bits&gt;:&lt;unit&gt;:&lt;epoch&gt; (unit 1ms, 10ms, 1s, ...;
     * epoch RFC 3339 or Unix milliseconds), then &lt;name&gt;:&lt;bits&gt; for each
     * node field and the sequence (seq). Throws an IllegalArgumentException that
     * names what is wrong.
     */
    public static Layout parse(String text) {
        String s = text == null ? "" : text.trim();
        if (s.isEmpty()) {
            throw invalid("empty layout; give a preset name (" + String.join(", ", PRESETS.keySet())
                + ") or fields such as time:41:1ms:2010-11-04T01:42:54.657Z,worker:10,seq:12");
        }
        if (!s.contains(":") && !s.contains(",")) {
            String key = s.toLowerCase(Locale.ROOT);
            Object[] p = PRESETS.get(key);
            if (p == null) {
                throw invalid("unknown preset " + Json.quote(clip(s)) + "; known presets: " + String.join(", ", PRESETS.keySet())
                    + " (or give fields, e.g. time:41:1ms:2010-11-04T01:42:54.657Z,worker:10,seq:12)");
            }
            Object[] fs = (Object[]) p[2];
            List<String> names = new ArrayList<>();
            List<Kind> kinds = new ArrayList<>();
            List<Integer> widths = new ArrayList<>();
            for (int k = 0; k < fs.length; k += 2) {
                String n = (String) fs[k];
                names.add(n);
                kinds.add(n.equals("time") ? Kind.TIME : n.equals("seq") ? Kind.SEQ : Kind.NODE);
                widths.add((Integer) fs[k + 1]);
            }
            return new Layout(key, (Long) p[0], (Long) p[1], names, kinds, widths);
        }
        long unit = 0;
        long epoch = 0;
        List<String> names = new ArrayList<>();
        List<Kind> kinds = new ArrayList<>();
        List<Integer> widths = new ArrayList<>();
        String[] raws = s.split(",", -1);
        for (int i = 0; i < raws.length; i++) {
            String raw = raws[i];
            String[] parts = raw.split(":", -1);
            for (int k = 0; k < parts.length; k++) {
                parts[k] = parts[k].trim();
            }
            String fname = parts[0];
            if (fname.equals("time")) {
                if (parts.length < 4) {
                    throw invalid("field " + (i + 1) + " " + Json.quote(clip(raw.trim()))
                        + ": the time field is time:<bits>:<unit>:<epoch>, e.g. time:41:1ms:2010-11-04T01:42:54.657Z");
                }
                int b = parseBits(i, fname, parts[1]);
                unit = parseUnit(parts[2]);
                epoch = parseEpoch(String.join(":", Arrays.asList(parts).subList(3, parts.length)));
                names.add("time");
                kinds.add(Kind.TIME);
                widths.add(b);
                continue;
            }
            if (parts.length != 2) {
                throw invalid("field " + (i + 1) + " " + Json.quote(clip(raw.trim())) + ": write <name>:<bits>, e.g. worker:10 or seq:12");
            }
            int b = parseBits(i, fname, parts[1]);
            if (fname.equals("seq") || fname.equals("sequence")) {
                names.add("seq");
                kinds.add(Kind.SEQ);
            } else {
                names.add(fname);
                kinds.add(Kind.NODE);
            }
            widths.add(b);
        }
        check(names, kinds, widths);
        if (epoch > System.currentTimeMillis()) {
            throw invalid("epoch " + formatEpoch(epoch) + " is in the future (now is " + Instant.now()
                + "); IDs before it cannot be made");
        }
        return new Layout("", unit, epoch, names, kinds, widths);
    }

    /** The preset's name, or "" for a layout given by its fields. */
    public String name() {
        return name;
    }

    /** The tick of the time field, in milliseconds. */
    public long unitMillis() {
        return unitMillis;
    }

    /** Where the time field counts from. */
    public Instant epoch() {
        return Instant.ofEpochMilli(epochMillis);
    }

    /** The fields, most significant first. */
    public List<Field> fields() {
        return fields;
    }

    /** The bits the fields take in all (at most 63). */
    public int bits() {
        return bits;
    }

    /** The canonical text form, which {@link #parse} reads and flurry writes. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (Field f : fields) {
            if (b.length() > 0) {
                b.append(',');
            }
            if (f.kind == Kind.TIME) {
                b.append("time:").append(f.bits).append(':').append(formatUnit(unitMillis)).append(':').append(formatEpoch(epochMillis));
            } else {
                b.append(f.name).append(':').append(f.bits);
            }
        }
        return b.toString();
    }

    /**
     * Takes an ID apart: the time of its tick, each node field, the sequence. An ID
     * that is negative or has bits above the layout's width is not one of this
     * layout: an IllegalArgumentException.
     */
    public Parts decode(long id) {
        if (id < 0 || (bits < 63 && (id >>> bits) != 0)) {
            throw invalid(id + " is not an ID of this " + bits + "-bit layout (0.." + ((1L << bits) - 1) + ")");
        }
        long tick = time.of(id);
        List<Info.NamedValue> vs = new ArrayList<>();
        for (Field f : nodes) {
            vs.add(new Info.NamedValue(f.name, f.of(id)));
        }
        return new Parts(id, Instant.ofEpochMilli(epochMillis + tick * unitMillis), tick,
            Collections.unmodifiableList(vs), seq.of(id));
    }

    /** The start of the tick an ID was made in (it does not check the ID: see decode). */
    public Instant timeOf(long id) {
        return Instant.ofEpochMilli(epochMillis + time.of(id) * unitMillis);
    }

    /**
     * The smallest and the largest ID any node can issue in the ticks that contain
     * from and to, for range queries on an ID column
     * ({@code WHERE id BETWEEN lo AND hi}): {lo, hi}. Times before the epoch count as
     * the first tick and times past the time field's end as the last.
     */
    public long[] bounds(Instant from, Instant to) {
        if (from.isAfter(to)) {
            throw invalid("range start " + from + " is after its end " + to);
        }
        long shift = time.shift;
        return new long[] {tickOf(from) << shift, (tickOf(to) << shift) | ((1L << shift) - 1)};
    }

    private long tickOf(Instant d) {
        long maxTick = (1L << time.bits) - 1;
        long t = Math.floorDiv(d.toEpochMilli() - epochMillis, unitMillis);
        return t < 0 ? 0 : Math.min(t, maxTick);
    }

    private static void check(List<String> names, List<Kind> kinds, List<Integer> widths) {
        Set<String> seen = new HashSet<>();
        int total = 0;
        int times = 0;
        int seqs = 0;
        StringBuilder sum = new StringBuilder();
        for (int i = 0; i < names.size(); i++) {
            String n = names.get(i);
            Kind k = kinds.get(i);
            if (k == Kind.TIME) {
                times++;
                if (i != 0) {
                    throw invalid("the time field is field " + (i + 1) + "; it must come first (most significant) so that IDs sort by time");
                }
            }
            if (k == Kind.SEQ) {
                seqs++;
            }
            if (k == Kind.NODE) {
                if (RESERVED.contains(n)) {
                    throw invalid(Json.quote(n) + " is reserved and cannot name a node field");
                }
                if (!n.matches("[a-z][a-z0-9_]{0,31}")) {
                    throw invalid("node field name " + Json.quote(clip(n)) + ": use a lower-case letter, then letters, digits or _ (at most 32)");
                }
            }
            if (!seen.add(n)) {
                throw invalid("two fields are named " + Json.quote(n));
            }
            if (widths.get(i) > 62) {
                throw invalid("field " + Json.quote(n) + " has " + widths.get(i) + " bits; at most 62 leave room for the other fields");
            }
            total += widths.get(i);
            sum.append(sum.length() == 0 ? "" : " + ").append(n).append(' ').append(widths.get(i));
        }
        if (times != 1) {
            throw invalid(times == 0 ? "no time field; add one first, e.g. time:41:1ms:<epoch>" : times + " time fields; a layout has exactly one");
        }
        if (seqs != 1) {
            throw invalid(seqs == 0 ? "no sequence field; add one, e.g. seq:12" : seqs + " sequence fields; a layout has exactly one");
        }
        if (total > 63) {
            throw invalid("fields take " + total + " bits (" + sum + "); at most 63 fit in a positive int64, so remove " + (total - 63));
        }
        if (names.size() - 2 > MAX_NODE_FIELDS) {
            throw invalid((names.size() - 2) + " node fields; at most " + MAX_NODE_FIELDS + " are supported");
        }
    }

    private static int parseBits(int i, String name, String s) {
        if (!s.matches("[0-9]{1,2}") || Integer.parseInt(s) < 1) {
            throw invalid("field " + (i + 1) + " " + Json.quote(clip(name)) + ": bits " + Json.quote(clip(s)) + " is not a number from 1 to 62");
        }
        return Integer.parseInt(s);
    }

    private static final Pattern UNIT = Pattern.compile("([0-9]+)(ms|s|m|h)");

    /** Reads a tick length as flurry writes it (1ms, 10ms, 1s; also 1m, 1h, 1m30s). */
    private static long parseUnit(String s) {
        if (!s.matches("(?:[0-9]+(?:ms|s|m|h))+")) {
            throw invalid("time unit " + Json.quote(clip(s)) + " is not a whole number of milliseconds such as 1ms, 10ms or 1s");
        }
        Matcher m = UNIT.matcher(s);
        long total = 0;
        try {
            while (m.find()) {
                long n = Long.parseLong(m.group(1));
                long per = m.group(2).equals("ms") ? 1 : m.group(2).equals("s") ? 1000 : m.group(2).equals("m") ? 60_000 : 3_600_000;
                total = Math.addExact(total, Math.multiplyExact(n, per));
            }
        } catch (ArithmeticException | NumberFormatException e) {
            total = -1;
        }
        if (total < 1) {
            throw invalid("time unit " + Json.quote(clip(s)) + " is not a whole positive number of milliseconds");
        }
        return total;
    }

    private static final Pattern RFC3339 = Pattern.compile(
        "[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\\.([0-9]+))?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})");

    /** Reads an epoch: RFC 3339 to the millisecond, or Unix milliseconds. */
    private static long parseEpoch(String s) {
        if (s.matches("[0-9]+")) {
            long ms;
            try {
                ms = Long.parseLong(s);
            } catch (NumberFormatException e) {
                ms = Long.MAX_VALUE;
            }
            if (ms > 253402300799999L) {
                throw invalid("epoch " + Json.quote(clip(s)) + " is beyond year 9999 in Unix milliseconds");
            }
            return ms;
        }
        Matcher m = RFC3339.matcher(s);
        long ms;
        try {
            if (!m.matches()) {
                throw new DateTimeParseException("", s, 0);
            }
            ms = OffsetDateTime.parse(s.toUpperCase(Locale.ROOT)).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            throw invalid("epoch " + Json.quote(clip(s)) + " is neither RFC 3339 (2010-11-04T01:42:54.657Z) nor Unix milliseconds");
        }
        String frac = m.group(1) == null ? "" : m.group(1);
        if (frac.length() > 3 && !frac.substring(3).replace("0", "").isEmpty()) {
            throw invalid("epoch " + Json.quote(clip(s)) + " has sub-millisecond precision; round it to a millisecond");
        }
        if (ms < 0) {
            throw invalid("epoch " + Json.quote(clip(s)) + " is before 1970-01-01");
        }
        return ms;
    }

    private static String formatUnit(long ms) {
        return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
    }

    private static String formatEpoch(long ms) {
        return Instant.ofEpochMilli(ms).toString();
    }

    private static String clip(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "…" : s;
    }

    private static IllegalArgumentException invalid(String message) {
        return new IllegalArgumentException("layout: " + message);
    }
}
