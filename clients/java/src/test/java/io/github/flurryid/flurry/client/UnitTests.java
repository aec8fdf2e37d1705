package io.github.flurryid.flurry.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/** What needs no server: options, the JSON and wire readers, layouts, the mix rules. */
final class UnitTests {
    private UnitTests() {
    }

    private static Map<String, Object> json(String s) {
        return Json.obj(Json.parse(s));
    }

    private static String packed(long... ids) {
        ByteBuffer b = ByteBuffer.allocate(8 * ids.length).order(ByteOrder.LITTLE_ENDIAN);
        for (long v : ids) {
            b.putLong(v);
        }
        return Base64.getEncoder().withoutPadding().encodeToString(b.array());
    }

    /** parseNext's refusal of a broken answer, as the ServerAnswerException a failover records. */
    private static String broken(String body, int asked) {
        ServerAnswerException.BrokenAnswer e = Check.thrown(ServerAnswerException.BrokenAnswer.class,
            () -> Wire.parseNext(json(body), asked, "http://x"));
        Check.eq("internal", e.answer().connectCode(), "code");
        return e.getMessage();
    }

    static void register(TestRunner r) {
        r.test("options are checked before any server is contacted", 10, () -> {
            Check.contains(Check.thrown(IllegalArgumentException.class, () -> FlurryClient.builder().build()).getMessage(),
                "no server", "no server");
            Check.contains(Check.thrown(IllegalArgumentException.class,
                () -> FlurryClient.builder().servers("ftp://x:1").build()).getMessage(), "not http or https", "scheme");
            Check.contains(Check.thrown(IllegalArgumentException.class,
                () -> FlurryClient.builder().servers("http://user:pw@x:1").build()).getMessage(), "token", "user info");
            Check.contains(Check.thrown(IllegalArgumentException.class,
                () -> FlurryClient.builder().servers("http://x:1/?a=b").build()).getMessage(), "query or fragment", "query");
            Check.contains(Check.thrown(IllegalArgumentException.class,
                () -> FlurryClient.builder().servers("x:1", "http://x:1/").build()).getMessage(), "listed twice", "twice");
            Check.contains(Check.thrown(IllegalArgumentException.class,
                () -> FlurryClient.builder().servers("x:1").batch(-1).build()).getMessage(), "batch", "batch");
            Check.contains(Check.thrown(IllegalArgumentException.class,
                () -> FlurryClient.builder().servers("x:1").backoff(Duration.ofMillis(500), Duration.ofMillis(100)).build()).getMessage(),
                "below backoff", "backoff");
            Check.contains(Check.thrown(IllegalArgumentException.class,
                () -> FlurryClient.builder().servers("x:1").hedgeDelay(Duration.ofMillis(50), Duration.ofMillis(20)).build()).getMessage(),
                "below hedgeMinDelay", "hedge delay");
            Check.contains(Check.thrown(IllegalArgumentException.class,
                () -> FlurryClient.builder().servers("x:1").timeout(Duration.ofSeconds(-1)).build()).getMessage(),
                "negative", "timeout");
            try (FlurryClient c = FlurryClient.builder().servers("127.0.0.1:1, http://127.0.0.1:2/").build()) {
                Check.eq("http://127.0.0.1:1", c.stats().get(0).url(), "first server");
                Check.eq("http://127.0.0.1:2", c.stats().get(1).url(), "second server");
                Check.eq(Duration.ofMillis(100), c.stats().get(0).hedgeDelay(), "the hedge delay before an answer");
                Check.thrown(IllegalArgumentException.class, () -> c.nextMany("default", 0));
            }
        });

        r.test("JSON: values, escapes, and what is refused", 10, () -> {
            Map<String, Object> m = json("{\"a\":\"x\\u00e9\\n\\\"\",\"b\":[1,-2.5e3,true,false,null],\"c\":{}}");
            Check.eq("x\u00e9\n\"", m.get("a"), "string");
            List<?> l = (List<?>) m.get("b");
            Check.eq("1", l.get(0).toString(), "integer kept as text");
            Check.eq("-2.5e3", l.get(1).toString(), "number kept as text");
            Check.eq(Boolean.TRUE, l.get(2), "true");
            Check.eq(null, l.get(4), "null");
            Check.eq(9007199254740993L, Json.toInt64("9007199254740993"), "an int64 above 2^53, exact");
            Check.eq(Long.MAX_VALUE, Json.toInt64(Json.parse("9223372036854775807")), "the largest int64");
            Check.thrown(ServerAnswerException.BrokenAnswer.class, () -> Json.toInt64("9223372036854775808"));
            Check.thrown(ServerAnswerException.BrokenAnswer.class, () -> Json.toInt64("1.5"));
            for (String bad : new String[] {"", "{", "[1,]", "{\"a\" 1}", "tru", "\"\\x\"", "1 2", "<html>"}) {
                Check.thrown(IllegalArgumentException.class, () -> Json.parse(bad));
            }
            Check.eq("\"a\\\"b\\\\\\n\\u0001\"", Json.quote("a\"b\\\n\u0001"), "quote");
        });

        r.test("answers: packedIds and ids read exactly; broken answers refused as the server's failure", 10, () -> {
            long big = (1L << 62) + 12345;
            Wire.NextAnswer a = Wire.parseNext(json("{\"packedIds\":\"" + packed(1, 2, big) + "\"}"), 3, "http://x");
            Check.eq(3, a.ids.length, "IDs");
            Check.eq(big, a.ids[2], "an ID above 2^62");
            String std = Base64.getEncoder().encodeToString(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(big).array());
            Check.eq(big, Wire.parseNext(json("{\"packedIds\":\"" + std.replace('+', '-').replace('/', '_') + "\"}"), 1, "x").ids[0],
                "URL alphabet, padded");
            Check.eq(7L, Wire.parseNext(json("{\"ids\":[\"5\",\"7\"]}"), 2, "x").ids[1], "ids as decimal strings");
            Check.eq("u", Wire.parseNext(json("{\"textIds\":[\"t\",\"u\"]}"), 2, "x").texts[1], "textIds");
            Check.contains(broken("{\"packedIds\":\"" + packed(5, 5) + "\"}", 2), "out of order, repeated", "repeated");
            Check.contains(broken("{\"packedIds\":\"" + packed(6, 5) + "\"}", 2), "out of order", "decreasing");
            Check.contains(broken("{\"packedIds\":\"" + packed(-1) + "\"}", 2), "negative", "negative");
            Check.contains(broken("{\"packedIds\":\"" + packed(1, 2, 3) + "\"}", 2), "3 IDs for 2 asked", "too many");
            Check.contains(broken("{}", 2), "no IDs", "none");
            Check.contains(broken("{\"packedIds\":\"" + packed(1) + "\",\"ids\":[\"1\"]}", 2), "both", "both");
            Check.contains(broken("{\"packedIds\":\"AAAA\"}", 2), "not a multiple of 8", "length");
            Check.contains(broken("{\"packedIds\":\"%%%%\"}", 2), "not base64", "alphabet");
            Check.contains(broken("{\"ids\":[1.5]}", 2), "64-bit integer", "not an integer");
        });

        r.test("server errors: Connect codes, plain statuses, and the refusals that are not failed over", 10, () -> {
            ServerAnswerException e = Check.thrown(ServerAnswerException.class,
                () -> Wire.answer("Next", 404, "{\"code\":\"not_found\",\"message\":\"unknown namespace \\\"x\\\"\"}"));
            Check.eq("not_found", e.connectCode(), "code");
            Check.ok(FlurryClient.refusal(e, "x", "http://s") instanceof UnknownNamespaceException, "not_found refuses");
            ServerAnswerException p = Check.thrown(ServerAnswerException.class, () -> Wire.answer("Next", 502, "<html>bad gateway</html>"));
            Check.eq("unavailable", p.connectCode(), "a proxy's 502");
            Check.eq(null, FlurryClient.refusal(p, "x", "http://s"), "a 502 is failed over");
            Check.eq("unimplemented", Check.thrown(ServerAnswerException.class, () -> Wire.answer("Next", 404, "")).connectCode(),
                "a 404 that is not a Connect error");
            Check.ok(FlurryClient.refusal(new ServerAnswerException("permission_denied", "m", 403), "x", "s") instanceof UnauthorizedException, "403");
            Check.ok(FlurryClient.refusal(new ServerAnswerException("unauthenticated", "m", 401), "x", "s") instanceof UnauthorizedException, "401");
            Check.ok(FlurryClient.refusal(new ServerAnswerException("invalid_argument", "m", 400), "x", "s") instanceof BadRequestException, "400");
            Check.eq(null, FlurryClient.refusal(new ServerAnswerException("unavailable", "m", 503), "x", "s"), "503 is failed over");
            Check.eq(null, FlurryClient.refusal(new java.io.IOException("reset"), "x", "s"), "a reset is failed over");
        });

        r.test("layouts: presets, text form, decode and bounds", 10, () -> {
            Layout tw = Layout.parse("Twitter");
            Check.eq("twitter", tw.name(), "name");
            Check.eq("time:41:1ms:2010-11-04T01:42:54.657Z,datacenter:5,worker:5,seq:12", tw.toString(), "text");
            Check.eq(tw.toString(), Layout.parse(tw.toString()).toString(), "round trip");
            Layout.Parts p = tw.decode((1000L << 22) | (1L << 17) | (2L << 12) | 3);
            Check.eq(Instant.parse("2010-11-04T01:42:55.657Z"), p.time(), "time: 1,000 ms after Twitter's epoch");
            Check.eq(List.of(new Info.NamedValue("datacenter", 1), new Info.NamedValue("worker", 2)), p.fields(), "node fields");
            Check.eq(3L, p.sequence(), "sequence");
            Layout d = Layout.parse("time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16");
            long id = (123456789L << 22) | (37L << 16) | 999;
            Layout.Parts q = d.decode(id);
            Check.eq(123456789L, q.tick(), "tick");
            Check.eq(new Info.NamedValue("worker", 37), q.fields().get(0), "worker");
            Check.eq(999L, q.sequence(), "seq");
            Check.eq(Instant.parse("2025-01-01T00:00:00Z").plusMillis(123456789), q.time(), "time");
            long[] lh = d.bounds(q.time(), q.time());
            Check.eq(123456789L << 22, lh[0], "lo");
            Check.eq((123456790L << 22) - 1, lh[1], "hi");
            Check.eq(0L, d.bounds(Instant.EPOCH, Instant.EPOCH)[0], "before the epoch: the first tick");
            Check.thrown(IllegalArgumentException.class, () -> d.decode(-1));
            Check.thrown(IllegalArgumentException.class, () -> Layout.parse("jssafe").decode(1L << 53));
            Check.eq(9, Layout.presetNames().size(), "presets");
            Check.eq(100L, Layout.parse("jssafe").unitMillis(), "jssafe's tick");
            String[][] bad = {
                {"", "empty layout"}, {"snowflake", "unknown preset"}, {"worker:10,time:41:1ms:0,seq:12", "must come first"},
                {"time:41:1ms:0,worker:10", "no sequence field"}, {"time:41:1ms:0,worker:20,seq:12", "at most 63"},
                {"time:41:1ms:0,id:10,seq:12", "reserved"}, {"time:41:1ms:0,Worker:10,seq:12", "lower-case"},
                {"time:41:1xs:0,seq:12", "time unit"}, {"time:41:1ms:2999-01-01T00:00:00Z,seq:12", "in the future"},
                {"time:41:1ms:2025-01-01T00:00:00.0001Z,seq:12", "sub-millisecond"}, {"time:41:1ms:yesterday,seq:12", "neither RFC 3339"},
                {"time:41:1ms:0,w:5,w:5,seq:12", "two fields are named"},
            };
            for (String[] b : bad) {
                Check.contains(Check.thrown(IllegalArgumentException.class, () -> Layout.parse(b[0])).getMessage(), b[1], b[0]);
            }
        });

        r.test("mix rules: private stores, shared stores, fixed fields, strategies", 10, () -> {
            String lay = "\"layout\":{\"text\":\"time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16\",\"node\":[{\"name\":\"worker\",\"value\":\"3\"}]}";
            Info.NamespaceInfo priv1 = new Info.NamespaceInfo(json("{\"name\":\"d\",\"strategy\":\"snowflake\"," + lay
                + ",\"lease\":{\"identity\":{\"id\":\"file:a\",\"private\":true},\"leased\":[\"worker\"]}}"));
            Info.NamespaceInfo priv2 = new Info.NamespaceInfo(json("{\"name\":\"d\",\"strategy\":\"snowflake\"," + lay
                + ",\"lease\":{\"identity\":{\"id\":\"file:b\",\"private\":true},\"leased\":[\"worker\"]}}"));
            Info.NamespaceInfo shared = new Info.NamespaceInfo(json("{\"name\":\"d\",\"strategy\":\"snowflake\"," + lay
                + ",\"lease\":{\"identity\":{\"id\":\"pg:x\"},\"leased\":[\"worker\"],\"scope\":\"s\"}}"));
            Info.NamespaceInfo other = new Info.NamespaceInfo(json("{\"name\":\"d\",\"strategy\":\"segment\"}"));
            Check.contains(MixCheck.collide(priv1, priv2), "only it can use", "two private stores");
            Check.contains(MixCheck.collide(priv1, shared), "different stores", "two stores");
            Check.eq("", MixCheck.collide(shared, shared), "one shared store");
            Check.contains(MixCheck.collide(shared, other), "as snowflake, the other as segment", "strategies");
            Check.eq("", MixCheck.collide(null, shared), "a server that does not say");
        });
    }
}
