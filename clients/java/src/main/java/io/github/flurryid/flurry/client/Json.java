package io.github.flurryid.flurry.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the client reads and writes: the Connect protocol's JSON form of
 * flurry's messages. Objects become {@code Map<String, Object>}, arrays
 * {@code List<Object>}, strings {@code String}, numbers their source text as a
 * {@link Num} (the Protobuf JSON mapping writes int64 as decimal strings, so no
 * 64-bit value passes through a double), and true/false/null {@code Boolean} and
 * {@code null}. It refuses anything that is not one JSON value.
 */
final class Json {
    private final String s;
    private int i;

    private Json(String s) {
        this.s = s;
    }

    /** A JSON number, kept as its text. */
    static final class Num {
        final String text;

        Num(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** Parses one JSON value; throws IllegalArgumentException naming the offset of what is wrong. */
    static Object parse(String text) {
        Json p = new Json(text);
        p.ws();
        Object v = p.value(0);
        p.ws();
        if (p.i != p.s.length()) {
            throw p.bad("text after the value");
        }
        return v;
    }

    private IllegalArgumentException bad(String what) {
        return new IllegalArgumentException("JSON: " + what + " at offset " + i);
    }

    private void ws() {
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            i++;
        }
    }

    private Object value(int depth) {
        if (depth > 64) {
            throw bad("nesting deeper than 64");
        }
        if (i >= s.length()) {
            throw bad("end of text where a value belongs");
        }
        char c = s.charAt(i);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return word("true", Boolean.TRUE);
            case 'f':
                return word("false", Boolean.FALSE);
            case 'n':
                return word("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw bad("unexpected character '" + c + "'");
        }
    }

    private Object word(String w, Object v) {
        if (!s.startsWith(w, i)) {
            throw bad("unknown word");
        }
        i += w.length();
        return v;
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> m = new LinkedHashMap<>();
        i++;
        ws();
        if (i < s.length() && s.charAt(i) == '}') {
            i++;
            return m;
        }
        for (;;) {
            ws();
            if (i >= s.length() || s.charAt(i) != '"') {
                throw bad("expected a member name");
            }
            String k = string();
            ws();
            if (i >= s.length() || s.charAt(i) != ':') {
                throw bad("expected ':'");
            }
            i++;
            ws();
            m.put(k, value(depth + 1));
            ws();
            if (i >= s.length()) {
                throw bad("unterminated object");
            }
            char c = s.charAt(i++);
            if (c == '}') {
                return m;
            }
            if (c != ',') {
                throw bad("expected ',' or '}'");
            }
        }
    }

    private List<Object> array(int depth) {
        List<Object> l = new ArrayList<>();
        i++;
        ws();
        if (i < s.length() && s.charAt(i) == ']') {
            i++;
            return l;
        }
        for (;;) {
            ws();
            l.add(value(depth + 1));
            ws();
            if (i >= s.length()) {
                throw bad("unterminated array");
            }
            char c = s.charAt(i++);
            if (c == ']') {
                return l;
            }
            if (c != ',') {
                throw bad("expected ',' or ']'");
            }
        }
    }

    private String string() {
        i++; // the opening quote
        StringBuilder b = null;
        int start = i;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == '"') {
                String out = b == null ? s.substring(start, i) : b.append(s, start, i).toString();
                i++;
                return out;
            }
            if (c < 0x20) {
                throw bad("control character in a string");
            }
            if (c == '\\') {
                if (b == null) {
                    b = new StringBuilder();
                }
                b.append(s, start, i);
                if (i + 1 >= s.length()) {
                    throw bad("unterminated escape");
                }
                char e = s.charAt(i + 1);
                i += 2;
                switch (e) {
                    case '"': b.append('"'); break;
                    case '\\': b.append('\\'); break;
                    case '/': b.append('/'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'n': b.append('\n'); break;
                    case 'r': b.append('\r'); break;
                    case 't': b.append('\t'); break;
                    case 'u':
                        if (i + 4 > s.length()) {
                            throw bad("short \\u escape");
                        }
                        try {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException x) {
                            throw bad("bad \\u escape");
                        }
                        i += 4;
                        break;
                    default:
                        throw bad("unknown escape \\" + e);
                }
                start = i;
                continue;
            }
            i++;
        }
        throw bad("unterminated string");
    }

    private Num number() {
        int start = i;
        if (s.charAt(i) == '-') {
            i++;
        }
        int digits = i;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        if (i == digits) {
            throw bad("a number without digits");
        }
        if (i < s.length() && s.charAt(i) == '.') {
            i++;
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
        }
        if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            i++;
            if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                i++;
            }
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
        }
        return new Num(s.substring(start, i));
    }

    /** Writes a string as a JSON string literal. */
    static String quote(String v) {
        StringBuilder b = new StringBuilder(v.length() + 2).append('"');
        for (int k = 0; k < v.length(); k++) {
            char c = v.charAt(k);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }

    // Readers of a parsed object's members, lenient as the Protobuf JSON mapping
    // allows (a zero value is left out).

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object v) {
        return v instanceof Map ? (Map<String, Object>) v : null;
    }

    static String str(Map<String, Object> m, String k) {
        Object v = m.get(k);
        return v instanceof String ? (String) v : "";
    }

    static boolean bool(Map<String, Object> m, String k) {
        return Boolean.TRUE.equals(m.get(k));
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Map<String, Object> m, String k) {
        Object v = m.get(k);
        return v instanceof List ? (List<Object>) v : new ArrayList<>();
    }

    static List<String> strings(Map<String, Object> m, String k) {
        List<String> out = new ArrayList<>();
        for (Object o : list(m, k)) {
            if (o instanceof String) {
                out.add((String) o);
            }
        }
        return out;
    }

    /** An int64 member: a decimal string or a JSON integer; 0 when left out. */
    static long int64(Map<String, Object> m, String k) {
        Object v = m.get(k);
        return v == null ? 0 : toInt64(v);
    }

    /** A double member (a number, or the strings "NaN", "Infinity"); 0 when left out. */
    static double num(Map<String, Object> m, String k) {
        Object v = m.get(k);
        try {
            if (v instanceof Num) {
                return Double.parseDouble(((Num) v).text);
            }
            if (v instanceof String && !((String) v).isEmpty()) {
                return Double.parseDouble((String) v);
            }
        } catch (NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /**
     * Reads an int64 of the Protobuf JSON mapping (a decimal string, or an integer
     * number); anything else throws a ServerAnswerException: the server broke the
     * contract.
     */
    static long toInt64(Object v) {
        String t = v instanceof String ? (String) v : v instanceof Num ? ((Num) v).text : null;
        if (t != null && t.matches("-?[0-9]{1,19}")) {
            try {
                return Long.parseLong(t);
            } catch (NumberFormatException e) {
                // out of range: below
            }
        }
        throw ServerAnswerException.broken("server answered with " + v + " where a 64-bit integer belongs");
    }
}
