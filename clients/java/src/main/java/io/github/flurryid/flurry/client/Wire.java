package io.github.flurryid.flurry.client;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The Connect protocol's unary calls with the JSON codec: a POST of the request
 * message as JSON to /flurry.v1.IDService/&lt;Method&gt;, answered by the response
 * message as JSON (HTTP 200) or by a Connect error, {"code","message"}. JSON
 * follows the Protobuf JSON mapping: int64 fields are decimal strings and bytes
 * fields base64, so nothing 64-bit passes through a double. The TypeScript
 * client speaks the same.
 */
final class Wire {
    private static final String SERVICE = "/flurry.v1.IDService/";

    private Wire() {
    }

    /**
     * Sends one unary request; the future completes with the parsed JSON object, or
     * exceptionally with a ServerAnswerException (the server's error, or an answer
     * that is not one) or what the HTTP client throws (IOException, timeouts).
     */
    static CompletableFuture<Map<String, Object>> unary(HttpClient http, String baseURL, String method,
                                                       String body, String token, Duration timeout) {
        return http.sendAsync(request(baseURL, method, body, token, timeout), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8))
            .handle((resp, err) -> {
                if (err != null) {
                    Throwable e = FlurryClient.unwrap(err);
                    if (e instanceof java.net.http.HttpTimeoutException) {
                        e = new java.net.http.HttpTimeoutException("no answer within " + timeout.toMillis() + " ms (the timeout option)");
                    }
                    throw new CompletionException(e);
                }
                try {
                    return answer(method, resp.statusCode(), resp.body());
                } catch (ServerAnswerException e) {
                    throw new CompletionException(e);
                }
            });
    }

    /** The POST of one unary call: the JSON message, the Connect headers, the token if any. */
    static HttpRequest request(String baseURL, String method, String body, String token, Duration timeout) {
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(baseURL + SERVICE + method))
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .header("Connect-Protocol-Version", "1")
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (!token.isEmpty()) {
            rb.header("Authorization", "Bearer " + token);
        }
        return rb.build();
    }

    /**
     * Reads an answer: the JSON object of a 200, else the ServerAnswerException of
     * the Connect error or of the HTTP status.
     */
    static Map<String, Object> answer(String method, int status, String text) throws ServerAnswerException {
        Object body;
        try {
            body = Json.parse(text);
        } catch (IllegalArgumentException e) {
            body = null;
        }
        Map<String, Object> m = Json.obj(body);
        if (status == 200) {
            if (m == null) {
                throw new ServerAnswerException("internal", "answer to " + method + " is not a JSON object: " + clip(text), status);
            }
            return m;
        }
        if (m != null && m.get("code") instanceof String) {
            String msg = Json.str(m, "message");
            throw new ServerAnswerException((String) m.get("code"), msg.isEmpty() ? (String) m.get("code") : msg, status);
        }
        throw new ServerAnswerException(codeOfStatus(status), "HTTP " + status + ": " + clip(text), status);
    }

    /**
     * The Connect code of an HTTP status whose body is not a Connect error (the
     * Connect protocol's table): a proxy's 502 is unavailable, a 404 from a path no
     * flurry serves is unimplemented (a broken server, not an unknown namespace).
     */
    static String codeOfStatus(int status) {
        switch (status) {
            case 400: return "internal";
            case 401: return "unauthenticated";
            case 403: return "permission_denied";
            case 404: return "unimplemented";
            case 429: case 502: case 503: case 504: return "unavailable";
            default: return "unknown";
        }
    }

    static String clip(String s) {
        String one = s.replaceAll("\\s+", " ").trim();
        if (one.isEmpty()) {
            return "(empty body)";
        }
        return one.length() > 200 ? one.substring(0, 200) + "..." : one;
    }

    /** A NextResponse's IDs: integers or text, as the namespace issues. */
    static final class NextAnswer {
        final long[] ids;
        final String[] texts;
        final String server;

        NextAnswer(long[] ids, String[] texts, String server) {
            this.ids = ids;
            this.texts = texts;
            this.server = server;
        }
    }

    /** The JSON body of a NextRequest. */
    static String nextRequest(String namespace, int count) {
        return "{\"namespace\":" + Json.quote(namespace) + ",\"count\":" + count + ",\"packedIds\":true}";
    }

    /**
     * Reads a NextResponse: packedIds (8 bytes per ID, little-endian, base64) when
     * the server knows the field, else ids (decimal strings), and textIds. It
     * refuses what breaks the contract, as a failure of that server: both ids and
     * packedIds, no IDs, more IDs than asked, integer IDs that are negative or not
     * strictly increasing (a repeated ID would be one).
     */
    static NextAnswer parseNext(Map<String, Object> m, int asked, String server) {
        long[] ids = new long[0];
        Object packed = m.get("packedIds");
        Object plain = m.get("ids");
        if (packed != null && !"".equals(packed)) {
            if (plain instanceof List && !((List<?>) plain).isEmpty()) {
                throw ServerAnswerException.broken("server answered with both ids and packedIds");
            }
            if (!(packed instanceof String)) {
                throw ServerAnswerException.broken("server answered with packedIds that are not a base64 string");
            }
            ids = unpack((String) packed);
        } else if (plain != null) {
            if (!(plain instanceof List)) {
                throw ServerAnswerException.broken("server answered with ids that are not a list");
            }
            List<?> l = (List<?>) plain;
            ids = new long[l.size()];
            for (int k = 0; k < ids.length; k++) {
                ids[k] = Json.toInt64(l.get(k));
            }
        }
        String[] texts = new String[0];
        Object t = m.get("textIds");
        if (t != null) {
            if (!(t instanceof List)) {
                throw ServerAnswerException.broken("server answered with textIds that are not a list of strings");
            }
            List<?> l = (List<?>) t;
            texts = new String[l.size()];
            for (int k = 0; k < texts.length; k++) {
                if (!(l.get(k) instanceof String)) {
                    throw ServerAnswerException.broken("server answered with textIds that are not a list of strings");
                }
                texts[k] = (String) l.get(k);
            }
        }
        int n = ids.length + texts.length;
        if (n == 0) {
            throw ServerAnswerException.broken("server answered with no IDs");
        }
        if (n > asked) {
            throw ServerAnswerException.broken("server answered with " + n + " IDs for " + asked + " asked");
        }
        long prev = -1;
        for (long v : ids) {
            if (v <= prev) {
                throw ServerAnswerException.broken("server answered with IDs out of order, repeated or negative ("
                    + v + " after " + prev + ")");
            }
            prev = v;
        }
        return new NextAnswer(ids, texts, server);
    }

    /** Decodes packedIds: base64 (standard or URL alphabet, padded or not) of 8 bytes per ID, little-endian. */
    static long[] unpack(String b64) {
        byte[] bytes;
        try {
            String std = b64.replace('-', '+').replace('_', '/');
            bytes = Base64.getDecoder().decode(std.getBytes(StandardCharsets.US_ASCII));
        } catch (IllegalArgumentException e) {
            throw ServerAnswerException.broken("server answered with packedIds that are not base64: " + e.getMessage());
        }
        if (bytes.length % 8 != 0) {
            throw ServerAnswerException.broken("server answered with " + bytes.length + " bytes of packedIds, not a multiple of 8");
        }
        long[] ids = new long[bytes.length / 8];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(ids);
        return ids;
    }
}
